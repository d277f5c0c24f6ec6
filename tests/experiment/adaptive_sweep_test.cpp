// The decisions of an adaptive sweep, on synthetic metric curves (no simulator, no store).
#include "experiment/adaptive_sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "sim/noise.hpp"

namespace wattwise::experiment {
namespace {

using analysis::parse_metric;

std::vector<double> limits_150_to_300() {
  std::vector<double> grid;
  for (double w = 150; w <= 300; w += 5) grid.push_back(w);
  return grid;
}

AdaptiveConfig energy_config(std::uint64_t seed = 1) {
  return default_adaptive_config("power_limit_w", limits_150_to_300(), 300, {parse_metric("E")}, seed);
}

// A job whose energy is lowest at `best_w` (a parabola, 1000 J there; 25% more at and below `wall_w`, where
// the GPU starves), time constant; `noise` relative.
struct SyntheticJob {
  double best_w = 190;
  double noise = 0;
  std::uint64_t seed = 1;
  double wall_w = 0;
  AdaptiveObservation run(double w, std::size_t index) const {
    sim::Noise n(seed * 7919 + index);
    const double energy_j = (1000 + 0.05 * (w - best_w) * (w - best_w)) * (w <= wall_w ? 1.25 : 1.0);
    return {w, 100 * (1 + noise * n.normal()), energy_j * (1 + noise * n.normal())};
  }
};

// Runs the decisions to the end; returns every run and the last decision.
std::pair<std::vector<AdaptiveObservation>, AdaptiveDecision> run_to_end(const AdaptiveConfig& config,
                                                                         const SyntheticJob& job) {
  std::vector<AdaptiveObservation> runs;
  for (;;) {
    const AdaptiveDecision d = decide_next(config, runs);
    if (!d.next) return {runs, d};
    runs.push_back(job.run(*d.next, runs.size()));
  }
}

TEST(AdaptiveSweep, CoarsePassSpreadsOverTheGridWithBothEndsAndTheReference) {
  AdaptiveConfig config = energy_config();
  config.reference_value = 285;  // not one of the evenly spread values
  auto coarse = coarse_indices(config);
  std::sort(coarse.begin(), coarse.end());
  EXPECT_EQ(coarse, (std::vector<std::size_t>{0, 5, 10, 15, 20, 25, 27, 30}));
}

TEST(AdaptiveSweep, CoarseOrderIsSeededAndRandomised) {
  EXPECT_EQ(coarse_indices(energy_config(3)), coarse_indices(energy_config(3)));
  EXPECT_NE(coarse_indices(energy_config(3)), coarse_indices(energy_config(4)));
}

TEST(AdaptiveSweep, FirstRunsAreTheCoarsePass) {
  const AdaptiveConfig config = energy_config();
  std::vector<AdaptiveObservation> runs;
  const auto coarse = coarse_indices(config);
  for (std::size_t i = 0; i < coarse.size(); ++i) {
    const AdaptiveDecision d = decide_next(config, runs);
    EXPECT_EQ(d.stage, AdaptiveStage::kCoarse);
    ASSERT_TRUE(d.next);
    EXPECT_EQ(*d.next, config.grid[coarse[i]]);
    runs.push_back(SyntheticJob{}.run(*d.next, i));
  }
  EXPECT_NE(decide_next(config, runs).stage, AdaptiveStage::kCoarse);
}

TEST(AdaptiveSweep, FindsTheMinimumOfANoiseFreeCurveBetweenCoarseValues) {
  for (const double best_w : {190.0, 160.0, 265.0}) {
    const auto [runs, last] = run_to_end(energy_config(), SyntheticJob{best_w, 0, 1});
    ASSERT_EQ(last.best.size(), 1u);
    EXPECT_EQ(last.best[0].pick_value, best_w) << last.reason;
    EXPECT_EQ(last.best[0].fitted_value, best_w);
    EXPECT_LT(runs.size(), energy_config().budget_runs)
        << "stopped by precision, not budget: " << last.reason;
  }
}

TEST(AdaptiveSweep, RefinesUntilTheBestsMeasuredNeighboursAreWithinThePrecision) {
  AdaptiveConfig config = energy_config();
  config.precision = 5;
  const auto [runs, last] = run_to_end(config, SyntheticJob{212, 0, 1});
  std::set<double> measured;
  for (const auto& r : runs) measured.insert(r.value);
  const double pick = last.best[0].pick_value;
  EXPECT_TRUE(measured.contains(pick - 5) && measured.contains(pick + 5)) << pick;
}

TEST(AdaptiveSweep, RepeatsOnlyNearTheBestAndAtTheReference) {
  const auto [runs, last] = run_to_end(energy_config(), SyntheticJob{190, 0.01, 5});
  std::map<double, int> counts;
  for (const auto& r : runs) ++counts[r.value];
  for (const auto& [w, n] : counts) {
    EXPECT_LE(n, static_cast<int>(energy_config().max_repeats)) << w;
    if (n > 1) {
      // The fit's window (6 grid steps of 5 W either side) and one step beyond, or the reference.
      EXPECT_TRUE(std::abs(w - last.best[0].fitted_value) <= 35 || w == 300) << w;
    }
  }
  EXPECT_GE(counts[last.best[0].pick_value], 2);
}

TEST(AdaptiveSweep, NoisyRunsStillLandWithinTenWattsOfTheMinimum) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto [runs, last] = run_to_end(energy_config(), SyntheticJob{190, 0.01, seed});
    EXPECT_NEAR(last.best[0].pick_value, 190, 10) << "seed " << seed;
  }
}

// A sweep steered by one metric repeats near the best until the budget is spent: its means must tell apart
// values 0.5% apart (the recommendation's goal), which 1% of noise per run needs far more than the four runs
// a value got when it stopped at a 1% interval (then ~30 of its 54 runs, the rest unspent).
TEST(AdaptiveSweep, ANoisySweepSteeredByOneMetricSpendsItsBudgetNearTheBest) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const AdaptiveConfig config = energy_config(seed);
    const auto [runs, last] = run_to_end(config, SyntheticJob{190, 0.01, seed});
    EXPECT_EQ(runs.size(), config.budget_runs) << "seed " << seed << ": " << last.reason;
    EXPECT_TRUE(last.budget_spent) << "seed " << seed << ": " << last.reason;
    std::map<double, int> counts;
    for (const auto& r : runs) ++counts[r.value];
    EXPECT_GE(counts[last.best[0].pick_value], 5) << "seed " << seed;
  }
}

TEST(AdaptiveSweep, ASteepSideFarAboveTheBestDoesNotDragThePickAway) {
  // +27% 20 W below the optimum, +2% 20 W above it (the simulated inception3's energy has such a wall):
  // a parabola through both sides puts its vertex well above 170 W; the fit leaves the wall out.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto [runs, last] = run_to_end(energy_config(seed), SyntheticJob{170, 0.005, seed, 150});
    EXPECT_NEAR(last.best[0].pick_value, 170, 10) << "seed " << seed;  // the default precision
  }
}

TEST(AdaptiveSweep, StopsWhenTheRunBudgetIsSpent) {
  AdaptiveConfig config = energy_config();
  config.budget_runs = 10;
  const auto [runs, last] = run_to_end(config, SyntheticJob{190, 0.01, 2});
  EXPECT_EQ(runs.size(), 10u);
  EXPECT_EQ(last.stage, AdaptiveStage::kDone);
  EXPECT_NE(last.reason.find("budget"), std::string::npos) << last.reason;
  EXPECT_FALSE(last.best.empty());
}

TEST(AdaptiveSweep, StopsWhenTheTimeBudgetIsSpent) {
  AdaptiveConfig config = energy_config();
  config.budget_s = 950;  // runs take 100 s each: the tenth run crosses it
  const auto [runs, last] = run_to_end(config, SyntheticJob{190, 0, 2});
  EXPECT_EQ(runs.size(), 10u);
}

TEST(AdaptiveSweep, DecisionsDependOnlyOnTheRunsNotTheirOrder) {
  const AdaptiveConfig config = energy_config(9);
  const SyntheticJob job{200, 0.01, 9};
  std::vector<AdaptiveObservation> runs;
  for (int i = 0; i < 20; ++i) runs.push_back(job.run(*decide_next(config, runs).next, runs.size()));
  const AdaptiveDecision before = decide_next(config, runs);
  std::reverse(runs.begin(), runs.end());  // as a resumed sweep might read them back
  const AdaptiveDecision after = decide_next(config, runs);
  EXPECT_EQ(before.next, after.next);
  EXPECT_EQ(before.stage, after.stage);
  EXPECT_EQ(before.best[0].pick_value, after.best[0].pick_value);
}

TEST(AdaptiveSweep, EveryMetricGetsItsOwnOptimum) {
  AdaptiveConfig config = energy_config();
  config.metrics = {parse_metric("E"), parse_metric("time")};
  const auto [runs, last] = run_to_end(config, SyntheticJob{180, 0, 1});
  ASSERT_EQ(last.best.size(), 2u);
  EXPECT_EQ(last.best[0].pick_value, 180);
  // Time is the same everywhere here; what matters is that both metrics have a measured pick.
  EXPECT_NE(std::find_if(runs.begin(), runs.end(),
                         [&](const AdaptiveObservation& r) { return r.value == last.best[1].pick_value; }),
            runs.end());
}

TEST(AdaptiveSweep, ASharpOptimumNextToTheLowestValueDoesNotAbortTheFit) {
  // Issue 22: `sweep --adaptive --simulate h100:resnet50 --power-limit 200:700:25` exited 4 after 7 runs ("a
  // quadratic fit needs at least three distinct x values, got 0 points"): the lowest mean at the second
  // coarse value with both neighbours more than 10% above it left a window of one value, widened below index
  // 0.
  std::vector<double> grid;
  for (double w = 200; w <= 700; w += 25) grid.push_back(w);
  const AdaptiveConfig config = default_adaptive_config("power_limit_w", grid, 700, {parse_metric("E")}, 1);
  std::vector<AdaptiveObservation> runs;
  for (std::size_t i : coarse_indices(config)) {
    const double w = grid[i];
    runs.push_back({w, 100, w == 275 ? 1000.0 : 1000.0 + 2 * std::abs(w - 275)});
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  ASSERT_EQ(runs[1].value, 275);  // the coarse pass measured 200, 275, 367.5->375, ...
  AdaptiveDecision d;
  ASSERT_NO_THROW(d = decide_next(config, runs));
  ASSERT_EQ(d.best.size(), 1u);
  EXPECT_NEAR(d.best[0].fitted_value, 275, 50);
  EXPECT_TRUE(d.next.has_value());
}

// A job that saves energy all the way down to 150 W but runs slower the lower its limit: 10% slower than at
// 300 W at 212.5 W, between the coarse pass's 200 and 225 W. Noise-free.
AdaptiveObservation slower_below(double w) {
  return {w, 100 * (1 + 0.1 * (300 - w) / 87.5), 1000 + 2 * (w - 150)};
}

std::vector<AdaptiveObservation> run_to_end(const AdaptiveConfig& config,
                                            const std::function<AdaptiveObservation(double)>& job) {
  std::vector<AdaptiveObservation> runs;
  while (const auto next = decide_next(config, runs).next) runs.push_back(job(*next));
  return runs;
}

bool ran(const std::vector<AdaptiveObservation>& runs, double w) {
  return std::any_of(runs.begin(), runs.end(), [&](const AdaptiveObservation& r) { return r.value == w; });
}

TEST(AdaptiveSweep, WhereTheHeadlinesSlowdownLimitBindsTheSweepRunsBothSidesOfItsCrossing) {
  // The headline every sweep closes with (E at most 10% slower) is 215 W here, the E optimum 150 W: a sweep
  // that refines E alone does not run both 210 and 215 W, the grid step the limit falls in, and its
  // headline is a step or more above 215 W (1% of energy a step here).
  const AdaptiveConfig config = energy_config();
  ASSERT_TRUE(config.headline);
  const auto runs = run_to_end(config, slower_below);
  EXPECT_TRUE(ran(runs, 210));
  EXPECT_TRUE(ran(runs, 215));
  EXPECT_LE(runs.size(), config.budget_runs);
  AdaptiveConfig without = config;
  without.headline.reset();
  const auto before = run_to_end(without, slower_below);
  EXPECT_FALSE(ran(before, 210) && ran(before, 215));  // what the refinement adds
}

// A run stored with a time of 0 (a database resumed after another tool or a hand wrote it) leaves the
// headline's limit judged on the means, as analyze judges it then, rather than ending the sweep in an
// internal error from the time curve, which takes logs.
TEST(AdaptiveSweep, ARunWithoutAPositiveTimeDoesNotEndTheSweepInAnInternalError) {
  const auto job = [](double w) {
    AdaptiveObservation r = slower_below(w);
    if (w == 250) r.time_s = 0;
    return r;
  };
  std::vector<AdaptiveObservation> runs;
  ASSERT_NO_THROW(runs = run_to_end(energy_config(), job));
  EXPECT_TRUE(ran(runs, 250));
}

TEST(AdaptiveSweep, WhereTheHeadlinesLimitDoesNotBindNothingIsRunForIt) {
  // The same slowdown, but the energy is lowest at 250 W, 5.7% slower than 300 W: that is the headline, the
  // limit's crossing (212.5 W) is beside the point and the sweep runs what it runs without the limit.
  const auto job = [](double w) {
    AdaptiveObservation r = slower_below(w);
    r.energy_j = 1000 + 0.05 * (w - 250) * (w - 250);
    return r;
  };
  const auto with_headline = run_to_end(energy_config(), job);
  AdaptiveConfig without = energy_config();
  without.headline.reset();
  const auto alone = run_to_end(without, job);
  ASSERT_EQ(with_headline.size(), alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(with_headline[i].value, alone[i].value);
  EXPECT_FALSE(ran(with_headline, 210) && ran(with_headline, 215));
}

TEST(AdaptiveSweep, UnderASlowdownLimitEachOptimumIsLookedForWithinIt) {
  // --max-slowdown 10% (analyze's limit, judged on the same time curve): E is lowest at 150 W, 32% slower
  // than 300 W; within 10% it is lowest at 215 W. A sweep steered by E alone refines and repeats around 150
  // W and leaves the limit's neighbourhood with one run a value; steered within the limit, its optimum,
  // pick and repeats are at 215 W.
  AdaptiveConfig limited = energy_config();
  limited.max_slowdown = 0.10;
  const auto runs = run_to_end(limited, slower_below);
  const AdaptiveDecision d = decide_next(limited, runs);
  ASSERT_EQ(d.best.size(), 1u);
  EXPECT_EQ(d.best[0].pick_value, 215);
  EXPECT_NEAR(d.best[0].fitted_value, 215, 5);
  std::map<double, int> count;
  for (const auto& r : runs) ++count[r.value];
  for (const auto& [w, n] : count) {
    if (n > 1) {
      EXPECT_TRUE(w == 300 || std::abs(w - 215) <= 40) << w << " W repeated " << n << " times";
    }
  }
  EXPECT_GT(count[215], 1);

  const AdaptiveConfig unlimited = energy_config();
  const auto alone = run_to_end(unlimited, slower_below);
  EXPECT_EQ(decide_next(unlimited, alone).best[0].pick_value, 150);
  std::map<double, int> alone_count;
  for (const auto& r : alone) ++alone_count[r.value];
  EXPECT_LE(alone_count[215], 1);  // what the limit moves: the repeats
}

TEST(AdaptiveSweep, UnderASlowdownLimitThatDoesNotBindTheSweepIsTheSameAsWithout) {
  // Lowest energy at 250 W, 5.7% slower than 300 W: within any 10% limit, so the limit changes no run.
  const auto job = [](double w) {
    AdaptiveObservation r = slower_below(w);
    r.energy_j = 1000 + 0.05 * (w - 250) * (w - 250);
    return r;
  };
  AdaptiveConfig limited = energy_config();
  limited.max_slowdown = 0.10;
  const auto with_limit = run_to_end(limited, job);
  const auto without = run_to_end(energy_config(), job);
  ASSERT_EQ(with_limit.size(), without.size());
  for (std::size_t i = 0; i < without.size(); ++i) EXPECT_EQ(with_limit[i].value, without[i].value);
}

}  // namespace
}  // namespace wattwise::experiment
