#include "tune/tuner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "sim/noise.hpp"

namespace wattwise::tune {
namespace {

// A job's iteration at one power limit, noise-free: time and energy.
struct Point {
  double time_s = 0;
  double energy_j = 0;
};
using Curve = std::function<Point(double limit_w)>;

// A unimodal energy curve with its minimum at 180 W; time grows below 250 W.
Point bowl(double limit_w) {
  const double time_s = 0.1 * (1 + 0.4 * std::max(0.0, (250 - limit_w) / 150));
  const double energy_j = 20 * (1 + 0.5 * std::pow((limit_w - 180) / 120, 2));
  return {time_s, energy_j};
}

TunerConfig power_config() {
  TunerConfig c;
  c.min_value = 100;
  c.max_value = 300;
  c.step = 5;
  c.start_value = 300;
  // 0.1 s iterations: the stationarity test's 30-iteration minimum is then the window.
  c.stationary_window_s = 3;
  return c;
}

struct DrivenJob {
  std::vector<double> held_w;  // the setting of every iteration fed
  std::vector<double> time_s;
};

// Feeds `iterations` noisy iterations (2% CV energy, 1% CV time, as measured on the H100) of `curve` to
// the tuner, applying its decisions. `curve_at` may change the job mid-way (drift).
DrivenJob drive(Tuner& tuner, const std::function<Point(double, std::uint64_t)>& curve_at,
                std::uint64_t iterations, std::uint64_t seed) {
  sim::Noise noise(seed);
  DrivenJob run;
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const double held = tuner.current_value();
    const Point p = curve_at(held, i);
    const double time_s = p.time_s * (1 + 0.01 * noise.normal());
    const double energy_j = p.energy_j * (1 + 0.02 * noise.normal());
    run.held_w.push_back(held);
    run.time_s.push_back(time_s);
    tuner.observe({time_s, energy_j});
  }
  return run;
}

DrivenJob drive(Tuner& tuner, const Curve& curve, std::uint64_t iterations, std::uint64_t seed) {
  return drive(
      tuner, [&](double w, std::uint64_t) { return curve(w); }, iterations, seed);
}

// The tuner after 1500 iterations of the bowl; it should have settled (settled_value().value() throws if
// not).
Tuner settle_on_bowl(const TunerConfig& config, std::uint64_t seed) {
  Tuner tuner(config);
  drive(tuner, bowl, 1500, seed);
  EXPECT_TRUE(tuner.settled()) << "seed " << seed;
  return tuner;
}

TEST(Tuner, FindsTheOptimumOfAUnimodalCurveWithinPrecision) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Tuner tuner(power_config());
    drive(tuner, bowl, 1000, seed);
    ASSERT_TRUE(tuner.settled()) << "seed " << seed;
    const double settled_energy = bowl(*tuner.settled_value()).energy_j;
    // Within two precisions (1% each) of the optimum's metric: the last comparison sets two estimates against
    // each other, each known to +-1%. Far fewer iterations than Zeus' 1,050.
    EXPECT_LE(settled_energy, bowl(180).energy_j * 1.02)
        << "seed " << seed << " settled " << *tuner.settled_value();
    EXPECT_LT(tuner.profiling_iterations(), 400u) << "seed " << seed;
  }
}

TEST(Tuner, DiscardsWarmUpIterationsAfterEveryChange) {
  TunerConfig config = power_config();
  config.warmup_iterations = 4;
  config.warmup_s = 0;  // the count alone: the wild iterations below take 0.5 s each
  Tuner tuner(config);
  // The first 4 iterations after every change are wildly off (clocks settling); if any were kept, the
  // probe's estimate would be far from the curve's.
  double last_value = -1;
  std::uint64_t since_change = 0;
  sim::Noise noise(3);
  for (int i = 0; i < 600 && !tuner.settled(); ++i) {
    const double held = tuner.current_value();
    since_change = held == last_value ? since_change + 1 : 0;
    if (i == 0) since_change = 0;
    last_value = held;
    Point p = bowl(held);
    if (since_change < 4) p = {p.time_s * 5, p.energy_j * 5};
    tuner.observe({p.time_s * (1 + 0.01 * noise.normal()), p.energy_j * (1 + 0.02 * noise.normal())});
  }
  ASSERT_TRUE(tuner.settled());
  for (const Decision& d : tuner.decisions()) {
    EXPECT_LT(d.estimate, 1.6) << d.reason;  // 5x energy would put the estimate near 5
  }
  EXPECT_LE(bowl(*tuner.settled_value()).energy_j, bowl(180).energy_j * 1.01);
}

TEST(Tuner, NeverSettlesAboveTheSlowdownBudgetAndAbandonsSlowCandidatesAtOnce) {
  TunerConfig config = power_config();
  config.max_slowdown = 0.10;
  // Time rises steeply below 250 W: the energy optimum (180 W) is 19% slower, over the budget; the budget's
  // edge lies at 212.5 W.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Tuner tuner(config);
    const DrivenJob run = drive(tuner, bowl, 1500, seed);
    ASSERT_TRUE(tuner.settled());
    const double budget_s = 1.10 * bowl(300).time_s;
    // The settled candidate's mean time is under the budget; it rests on at least 5 iterations at 1% CV, so
    // its true time is within +-1.2% (t(4) * 1% / sqrt(5)) of it: beyond the budget by at most that noise.
    EXPECT_LE(bowl(*tuner.settled_value()).time_s, budget_s * 1.012) << "seed " << seed;
    // No candidate over the budget by more than the noise is held for more than warm-up plus the probe's
    // minimum (5 + 5 iterations) before it is abandoned.
    std::uint64_t run_length = 0;
    for (std::size_t i = 0; i < run.held_w.size(); ++i) {
      run_length = (i > 0 && run.held_w[i] == run.held_w[i - 1]) ? run_length + 1 : 1;
      if (bowl(run.held_w[i]).time_s > budget_s * 1.03) {
        EXPECT_LE(run_length, 10u) << run.held_w[i] << " W";
      }
    }
  }
}

TEST(Tuner, ACandidateOverTheBudgetWhenConfirmedGivesWayToTheNextWithinItNotToTheStart) {
  TunerConfig config = power_config();
  // 215 W is 9.33% slower than 300 W: inside a 9.4% budget by 0.07%, so it often measures over the budget
  // when confirmed; the settings just above it still save about 30% of the energy.
  config.max_slowdown = 0.094;
  // Holding the start value then gives all of it away (seen in bench_tune_regret: vgg19 settled at 300 W,
  // 18% regret, after 215 W measured over the budget on its confirmation).
  // (The path itself is rare since the budget's edge is decided from a fit of time across the candidates
  // against the start value's pooled time: 215 W no longer measures over the budget on its confirmation on
  // these seeds. The invariants are what matters when it does.)
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Tuner tuner = settle_on_bowl(config, seed);
    EXPECT_FALSE(tuner.held_start()) << "seed " << seed;
    EXPECT_LE(bowl(tuner.settled_value().value()).energy_j, bowl(300).energy_j * 0.8) << "seed " << seed;
  }
}

TEST(Tuner, OnLongIterationsTheWarmUpEndsOnceASecondPassed) {
  // 1.2 s iterations: one of them covers the ~1 s a GPU takes to settle after a change, so only one is
  // discarded, not warmup_iterations (5): the slow jobs' probes cost a third less.
  const auto slow = [](double limit_w) {
    Point p = bowl(limit_w);
    return Point{p.time_s * 12, p.energy_j * 12};
  };
  Tuner tuner(power_config());
  const DrivenJob run = drive(tuner, slow, 1500, 4);
  ASSERT_TRUE(tuner.settled());
  int checked = 0;
  for (const Decision& d : tuner.decisions()) {
    if (d.kind != DecisionKind::kProbe || d.iterations == 0) continue;
    // The run of iterations at one setting that this decision ended, and whether a change began it.
    std::size_t end = d.at_iteration, begin = end - 1;
    while (begin > 0 && run.held_w[begin - 1] == run.held_w[end - 1]) --begin;
    if (begin == 0) continue;  // the start value's wait and baseline: no change before them
    // A re-measurement of the start value keeps start_check_iterations (8); its decision shows the
    // candidates re-estimated. A candidate's probe keeps what its decision rests on.
    const std::uint64_t kept = run.held_w[begin] == 300 ? 8 : d.iterations;
    EXPECT_EQ(end - begin, kept + 1) << d.reason;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(Tuner, DecidesTheBudgetsEdgeFromAFitOfTimeAcrossTheCandidates) {
  TunerConfig config = power_config();
  config.max_slowdown = 0.10;
  // The budget's edge lies at 212.5 W: 215 W is 9.33% slower, inside it by 0.6%, and 210 W 10.67% slower,
  // over it by 0.6%. One candidate's mean of 15 iterations at 1% CV is known to +-0.6%, and the start value's
  // time (the budget's yardstick) to about as much: per-candidate means land a step to either side.
  int at_edge = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const double settled = settle_on_bowl(config, seed).settled_value().value();
    EXPECT_GE(settled, 215) << "seed " << seed;  // never over the budget
    at_edge += settled == 215;
  }
  EXPECT_GE(at_edge, 18);
}

TEST(Tuner, KeepsTheBudgetToWithinItsToleranceNotAtOneProbesMean) {
  TunerConfig config = power_config();
  // 215 W is 9.33% slower than 300 W: inside a 9.45% budget by 0.11%, as the best limit under a budget
  // often is; 210 W is 10.67% slower, over it by 1.1%. A probe's mean time is known to about +-0.6% here, so
  // a rule that abandons a candidate whose mean time is over the budget threw 215 W away on about half the
  // seeds (for 220 W, 7% more energy); judged within the tolerance, with the fit of time across the
  // candidates deciding the edge, it is held on most of them.
  config.max_slowdown = 0.0945;
  int at_edge = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    const Tuner tuner = settle_on_bowl(config, seed);
    const double settled = tuner.settled_value().value();
    // Never over the budget by more than the tolerance and the benchmark's 0.5% of time.
    EXPECT_LE(bowl(settled).time_s, (1 + config.max_slowdown.value()) * bowl(300).time_s * 1.0065)
        << "seed " << seed;
    at_edge += settled == 215;
    if (settled != 300) {
      // The settle says how the budget was judged, and the held setting's slowdown with its interval.
      const std::string& reason = tuner.decisions().back().reason;
      EXPECT_NE(reason.find("kept to within 0.15% of its time"), std::string::npos) << reason;
      EXPECT_NE(reason.find("time +"), std::string::npos) << reason;
    }
  }
  EXPECT_GE(at_edge, 25);
}

TEST(Tuner, WithoutAFitOfTimeAtTheEdgeHoldsNoCandidateWhoseOwnMeanTimeIsOverTheBudget) {
  // Candidates 50 W apart: 200 W is the lowest energy and 13.3% slower than 300 W, over a 12.75% budget by
  // 0.51% (beyond the benchmark's 0.5% allowance); its neighbours are 13% of time away, so no two candidates
  // straddle the budget within the fit of time's reach and nothing but 200 W's own probes can judge it. A
  // candidate over the budget only within its noise is kept for that fit, not abandoned; with no fit, it
  // must not be held on a mean time over the budget (its settle line would then say "+13.x% against the
  // 12.75% budget"). 250 W is the next within it. Held on 9 of 40 seeds before the rule, 1 after (a probe
  // whose mean time came out under the budget: judged on its mean, as every candidate is).
  TunerConfig config = power_config();
  config.step = 50;
  config.max_slowdown = 0.1275;
  int over = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Tuner tuner = settle_on_bowl(config, seed);
    over += tuner.settled_value().value() == 200;
  }
  EXPECT_LE(over, 4);
}

TEST(Tuner, CapsTheBudgetsEdgeProbesByWhatIsLeftOfTheProfilingBudget) {
  // A candidate whose mean time is within its noise of the budget's edge gets up to twice a probe's
  // iterations. Near the edge of a 9.45% budget (215 W 0.11% inside it, 210 W 1.1% over) several candidates
  // do, late in the search: uncapped, such probes ran on past the profiling budget (on the benchmark, three
  // replayed budget cases spent 201-210 profiling iterations). Past its cap, an edge probe goes on only while
  // the search's iterations and the start value's measurement after it fit in the profiling budget. On this
  // bowl's 41 candidates the search reaches the edge after ~150 iterations: with a profiling budget of 170,
  // the uncapped probes ended 181-183 iterations in.
  TunerConfig config = power_config();
  config.max_slowdown = 0.0945;
  config.profiling_budget = 170;
  const std::uint64_t start_check = config.start_check_iterations + config.warmup_iterations;
  int extended = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const Tuner tuner = settle_on_bowl(config, seed);
    for (const Decision& d : tuner.decisions()) {
      // A candidate's probe that ran past its cap (a re-measurement of the start value shows the candidates
      // re-estimated with their iterations, and its line begins with "start").
      if (d.kind != DecisionKind::kProbe || d.iterations <= config.max_probe_iterations ||
          d.reason.starts_with("start"))
        continue;
      ++extended;
      // The search's iterations when this probe ended: all fed since the wait for stationary ones.
      const std::uint64_t searched = d.at_iteration - tuner.stationary_wait_iterations();
      EXPECT_LE(searched + start_check, config.profiling_budget) << "seed " << seed << ": " << d.reason;
    }
    const double settled = tuner.settled_value().value();
    EXPECT_LE(bowl(settled).time_s, (1 + config.max_slowdown.value()) * bowl(300).time_s * 1.0065)
        << "seed " << seed;
    EXPECT_LT(bowl(settled).energy_j, bowl(300).energy_j) << "seed " << seed;
  }
  EXPECT_GE(extended, 5);  // the edge still gets its longer probes where they fit
}

// The iterations of every candidate's probe in the search that ended at its cap: not the start value's
// measurements (their lines begin with "start") nor the confirmation (its settle line reads "W again: ...").
std::vector<std::uint64_t> capped_candidate_probes(const Tuner& tuner) {
  std::vector<std::uint64_t> out;
  for (const Decision& d : tuner.decisions())
    if (d.kind == DecisionKind::kProbe && !d.reason.starts_with("start") &&
        d.reason.find(" again:") == std::string::npos && d.reason.find("iteration cap") != std::string::npos)
      out.push_back(d.iterations);
  return out;
}

TEST(Tuner, WithoutABudgetACandidatesProbeEndsAtTheSearchCapAndTheConfirmationKeepsItsOwn) {
  // Without a budget the choice is the fit across the candidates: a probe of a candidate ends at
  // search_probe_iterations (11), leaving iterations for more candidates; the confirmation, the A/A test's
  // guard, keeps all of max_probe_iterations (15).
  int capped_at_search = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const TunerConfig config = power_config();
    const Tuner tuner = settle_on_bowl(config, seed);
    EXPECT_LE(bowl(*tuner.settled_value()).energy_j, bowl(180).energy_j * 1.01) << "seed " << seed;
    for (const std::uint64_t n : capped_candidate_probes(tuner)) {
      EXPECT_LE(n, config.search_probe_iterations) << "seed " << seed;
      capped_at_search += n == config.search_probe_iterations;
    }
    if (!tuner.held_start()) {  // the confirmation's iterations
      EXPECT_EQ(tuner.decisions().back().iterations, config.max_probe_iterations) << "seed " << seed;
    }
  }
  EXPECT_GE(capped_at_search, 5);
}

TEST(Tuner, UnderABudgetACandidatesProbeKeepsTheFullCap) {
  // Under a budget a candidate's own time decides the budget's edge: its probe keeps max_probe_iterations
  // (15), and one within its noise of the edge up to twice that (step 4 of docs/tune.md).
  int capped_at_max = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    TunerConfig config = power_config();
    config.max_slowdown = 0.30;  // 180 W, the optimum, is 19% slower: inside
    const Tuner tuner = settle_on_bowl(config, seed);
    EXPECT_LE(bowl(*tuner.settled_value()).energy_j, bowl(180).energy_j * 1.01) << "seed " << seed;
    for (const std::uint64_t n : capped_candidate_probes(tuner)) {
      EXPECT_LE(n, 2 * config.max_probe_iterations) << "seed " << seed;
      capped_at_max += n >= config.max_probe_iterations;
    }
  }
  EXPECT_GE(capped_at_max, 5);
}

TEST(Tuner, HoldsTheBestWithinTheBudgetWhenTheOptimumIsInside) {
  TunerConfig config = power_config();
  config.max_slowdown = 0.30;  // 180 W is 19% slower: inside
  Tuner tuner(config);
  drive(tuner, bowl, 1500, 5);
  ASSERT_TRUE(tuner.settled());
  EXPECT_LE(bowl(*tuner.settled_value()).energy_j, bowl(180).energy_j * 1.01);
}

// Not unimodal: the global minimum at 270 W, a ridge at 225 W and a shallower valley near 190 W to its left
// (11% above the minimum). Golden section's first pair (175 W, 225 W) points it left, into the wrong valley.
Point two_valleys(double limit_w) {
  const double base = 1 + 0.15 * std::pow((limit_w - 270) / 110, 2);
  const double ridge = 0.3 * std::exp(-std::pow((limit_w - 225) / 20, 2));
  return {0.1, 20 * (base + ridge)};
}

TEST(Tuner, FallsBackToACoarseScanWhenTheMetricIsNotUnimodal) {
  Tuner tuner(power_config());
  drive(tuner, two_valleys, 2000, 7);
  ASSERT_TRUE(tuner.settled());
  bool fallback = false;
  for (const Decision& d : tuner.decisions())
    fallback = fallback || d.reason.find("not unimodal") != std::string::npos;
  EXPECT_TRUE(fallback);
  EXPECT_LE(two_valleys(*tuner.settled_value()).energy_j, two_valleys(270).energy_j * 1.02)
      << "settled " << *tuner.settled_value();
}

TEST(Tuner, DriftWhileSettledTriggersARetune) {
  Tuner tuner(power_config());
  // A new phase of training at iteration 1500: every iteration 30% longer and its energy curve moves.
  const auto phased = [](double w, std::uint64_t i) {
    Point p = bowl(w);
    if (i >= 1500) p = {p.time_s * 1.3, p.energy_j * 1.3 * (1 + 0.5 * std::pow((w - 260) / 120, 2))};
    return p;
  };
  drive(tuner, phased, 3000, 11);
  std::size_t retunes = 0;
  for (const Decision& d : tuner.decisions())
    if (d.kind == DecisionKind::kRetune) {
      ++retunes;
      EXPECT_GE(d.at_iteration, 1500u);
      EXPECT_NE(d.reason.find("drift"), std::string::npos);
    }
  EXPECT_EQ(retunes, 1u);
  ASSERT_TRUE(tuner.settled());
  EXPECT_GT(*tuner.settled_value(), 200);  // the new phase's optimum is higher
}

TEST(Tuner, NoRetuneWithoutDrift) {
  Tuner tuner(power_config());
  drive(tuner, bowl, 5000, 13);
  for (const Decision& d : tuner.decisions()) EXPECT_NE(d.kind, DecisionKind::kRetune) << d.reason;
}

// Energy falling all the way to the range's low end, steeply near it (as E on the V100 models).
Point falling(double limit_w) {
  const double time_s = 0.1 * (1 + 0.5 * (300 - limit_w) / 200);
  return {time_s, 20 * (0.7 + 0.3 * std::pow((limit_w - 100) / 200, 0.7))};
}

TEST(Tuner, FindsAnOptimumAtTheLowEndOfTheRange) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Tuner tuner(power_config());
    drive(tuner, falling, 1000, seed);
    ASSERT_TRUE(tuner.settled());
    EXPECT_LE(falling(*tuner.settled_value()).energy_j, falling(100).energy_j * 1.01)
        << "seed " << seed << " settled " << *tuner.settled_value();
  }
}

// A job that draws 160 W: limits above it change nothing (a plateau in time and energy over most of the
// range, where golden section's first pair lands), and below it the energy falls to its minimum at 115 W.
Point capped_job(double limit_w) {
  const double draw_w = std::min(limit_w, 160.0);
  const double time_s = 0.1 * std::pow(160 / draw_w, 0.6);
  return {time_s, 20 * (1 + 0.6 * std::pow((draw_w - 115) / 100, 2))};
}

TEST(Tuner, KeepsTheLowerSideOnThePlateauAboveTheJobsDraw) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Tuner tuner(power_config());
    drive(tuner, capped_job, 1000, seed);
    ASSERT_TRUE(tuner.settled());
    EXPECT_LE(capped_job(*tuner.settled_value()).energy_j, capped_job(115).energy_j * 1.02)
        << "seed " << seed << " settled " << *tuner.settled_value();
  }
}

TEST(Tuner, CountsAsProfilingTheIterationsAtOtherSettingsBeforeItSettled) {
  Tuner tuner(power_config());
  sim::Noise noise(21);
  std::vector<double> held_before_settling;
  while (!tuner.settled()) {
    ASSERT_LT(held_before_settling.size(), 2000u);
    const double held = tuner.current_value();
    held_before_settling.push_back(held);
    const Point p = bowl(held);
    tuner.observe({p.time_s * (1 + 0.01 * noise.normal()), p.energy_j * (1 + 0.02 * noise.normal())});
  }
  // The wait for stationary iterations at the start value is not profiling: the job ran as it would untuned.
  ASSERT_NE(*tuner.settled_value(), 300);
  const auto elsewhere = std::count_if(held_before_settling.begin(), held_before_settling.end(),
                                       [&](double w) { return w != *tuner.settled_value(); }) -
                         static_cast<std::int64_t>(tuner.stationary_wait_iterations());
  EXPECT_GE(tuner.stationary_wait_iterations(), 30u);
  EXPECT_EQ(tuner.profiling_iterations(), static_cast<std::uint64_t>(elsewhere));
  EXPECT_EQ(tuner.iterations_seen(), held_before_settling.size());
  // Held from then on: more iterations add nothing.
  drive(tuner, bowl, 500, 22);
  EXPECT_EQ(tuner.profiling_iterations(), static_cast<std::uint64_t>(elsewhere));
}

TEST(Tuner, TracesEveryDecisionWithItsEstimateAndInterval) {
  Tuner tuner(power_config());
  drive(tuner, bowl, 1000, 23);
  const auto& trace = tuner.decisions();
  ASSERT_GE(trace.size(), 3u);
  std::uint64_t last_at = 0;
  for (const Decision& d : trace) {
    EXPECT_GT(d.at_iteration, last_at);
    last_at = d.at_iteration;
    EXPECT_LE(d.interval_low, d.estimate) << d.reason;
    EXPECT_GE(d.interval_high, d.estimate) << d.reason;
    EXPECT_GE(d.iterations, power_config().min_probe_iterations) << d.reason;
    EXPECT_FALSE(d.reason.empty());
  }
  // The first decision leaves the start, whose estimate is the reference itself.
  EXPECT_NEAR(trace.front().estimate, 1.0, 1e-12);
  EXPECT_EQ(trace.back().kind, DecisionKind::kSettle);
  EXPECT_EQ(trace.back().value, *tuner.settled_value());
}

// The setting named in a reason right after `prefix` ("...; 160 W: 0.711 [0.696, 0.727]"), with the
// estimate printed after it; the last such in the reason.
struct NamedEstimate {
  double value = 0;
  double estimate = 0;
};
std::optional<NamedEstimate> last_named_estimate(const std::string& reason) {
  std::optional<NamedEstimate> last;
  for (auto at = reason.find("; "); at != std::string::npos; at = reason.find("; ", at + 1)) {
    double value = 0, estimate = 0;
    char unit[8] = {};
    if (std::sscanf(reason.c_str() + at + 2, "%lf %7[A-Z]: %lf [", &value, unit, &estimate) == 3)
      last = NamedEstimate{value, estimate};
  }
  return last;
}

TEST(Tuner, EachDecisionNamesTheSettingItsEstimateIsOf) {
  // The estimate is of the setting just measured, which is not the one held next; after a measurement of
  // the start value between candidates, it is of the candidate before it (named in the reason, judged
  // against the start value on both sides), not of the start value just left.
  std::size_t start_again_with_candidate = 0, settles_after_a_check = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    TunerConfig config = power_config();
    Tuner tuner(config);
    sim::Noise noise(300 + seed);
    bool first = true;
    for (int i = 0; i < 2000; ++i) {
      const double held = tuner.current_value();
      const Point p = bowl(held);
      const auto d =
          tuner.observe({p.time_s * (1 + 0.01 * noise.normal()), p.energy_j * (1 + 0.02 * noise.normal())});
      if (!d) continue;
      if (first) {
        // The baseline: the start value's estimate against itself.
        EXPECT_EQ(d->estimate_of, config.start_value) << d->reason;
        EXPECT_NEAR(d->estimate, 1.0, 1e-12);
        EXPECT_NE(d->value, config.start_value);
        first = false;
        continue;
      }
      if (held != config.start_value) {
        // A candidate just measured (or its confirmation): the estimate is its own.
        EXPECT_EQ(d->estimate_of, held) << "seed " << seed << ": " << d->reason;
        continue;
      }
      // The start value was just measured again: its decision rests on the last candidate whose estimate it
      // names, if any, else on the start value's own measurement.
      const auto named = last_named_estimate(d->reason);
      if (named && d->reason.rfind("start 300 W again", 0) == 0) {
        ++start_again_with_candidate;
        EXPECT_EQ(d->estimate_of, named->value) << "seed " << seed << ": " << d->reason;
        EXPECT_NEAR(d->estimate, named->estimate, 0.0005 + 1e-9) << d->reason;
        EXPECT_NE(d->estimate_of, config.start_value) << d->reason;
      } else if (d->reason.find("measured before and after it") != std::string::npos) {
        // A confirmation checked against the start value after it: of the candidate confirmed.
        ++settles_after_a_check;
        EXPECT_NE(d->estimate_of, config.start_value) << d->reason;
        EXPECT_EQ(d->estimate_of, std::stod(d->reason)) << d->reason;
      } else {
        EXPECT_EQ(d->estimate_of, config.start_value) << "seed " << seed << ": " << d->reason;
      }
    }
    EXPECT_FALSE(first) << "seed " << seed;
  }
  // The cases that differ from "the setting just left" occurred.
  EXPECT_GT(start_again_with_candidate, 0u);
  std::cout << "start-again decisions on a candidate: " << start_again_with_candidate
            << ", settles after a check: " << settles_after_a_check << "\n";
}

TEST(Tuner, SkipsACandidateWhoseIterationsNeverCarryEnergy) {
  Tuner tuner(power_config());
  sim::Noise noise(31);
  // Energy arrives at every setting but 175 W (the first probe, at 0.382 of the range): there the sampler
  // never resolves a window.
  for (int i = 0; i < 3000; ++i) {
    const double held = tuner.current_value();
    const Point p = bowl(held);
    std::optional<double> energy_j;
    if (held != 175) energy_j = p.energy_j * (1 + 0.02 * noise.normal());
    tuner.observe({p.time_s * (1 + 0.01 * noise.normal()), energy_j});
  }
  ASSERT_TRUE(tuner.settled());
  EXPECT_NE(*tuner.settled_value(), 175);
  bool skipped = false;
  for (const Decision& d : tuner.decisions()) {
    if (d.reason.find("175 W: no iteration with energy, skipped") != std::string::npos) {
      skipped = true;
      EXPECT_EQ(d.estimate_of, 175) << d.reason;  // an estimate of nothing, still of the setting measured
      EXPECT_EQ(d.iterations, 0u) << d.reason;
    }
    EXPECT_TRUE(std::isfinite(d.estimate)) << d.reason;
  }
  EXPECT_TRUE(skipped);
}

TEST(Tuner, WithoutEnergyStaysAtTheStart) {
  Tuner tuner(power_config());
  for (int i = 0; i < 500; ++i) EXPECT_FALSE(tuner.observe({0.1, std::nullopt}));
  EXPECT_EQ(tuner.current_value(), 300);
  EXPECT_FALSE(tuner.settled());
}

TEST(Tuner, BadConfigIsAUsageError) {
  const auto expect_usage = [](TunerConfig c) {
    try {
      Tuner tuner(c);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    }
  };
  TunerConfig inverted = power_config();
  inverted.min_value = 400;
  expect_usage(inverted);
  TunerConfig search_cap_below_minimum = power_config();
  search_cap_below_minimum.search_probe_iterations = search_cap_below_minimum.min_probe_iterations - 1;
  expect_usage(search_cap_below_minimum);
  TunerConfig maximum_below_minimum = power_config();
  maximum_below_minimum.max_probe_iterations = maximum_below_minimum.min_probe_iterations - 1;
  expect_usage(maximum_below_minimum);
  TunerConfig no_step = power_config();
  no_step.step = 0;
  expect_usage(no_step);
  TunerConfig outside = power_config();
  outside.start_value = 350;
  expect_usage(outside);
  TunerConfig negative = power_config();
  negative.max_slowdown = -0.1;
  expect_usage(negative);
  TunerConfig loose_budget = power_config();
  loose_budget.max_slowdown = 0.1;
  loose_budget.budget_tolerance = 0.01;  // more than the benchmark's 0.5% of time
  expect_usage(loose_budget);
  TunerConfig odd_confidence = power_config();
  odd_confidence.confidence = 0.5;
  expect_usage(odd_confidence);
}

// The same energy and time at every setting (what a dry run sees: nothing changes), on a GPU that warms up
// (+3% energy over the first ~60 s of 0.1 s iterations) and then drifts up slowly (+2% per minute).
Point warming_flat(double, std::uint64_t i) {
  const double t_s = 0.1 * static_cast<double>(i);
  return {0.1, 20 * (1 - 0.03 * std::exp(-t_s / 20)) * (1 + 0.02 * t_s / 60)};
}

TEST(Tuner, WaitsForStationaryIterationsBeforeTheBaseline) {
  TunerConfig config = power_config();
  config.stationary_window_s = 20;
  Tuner tuner(config);
  drive(tuner, warming_flat, 3000, 41);
  ASSERT_FALSE(tuner.decisions().empty());
  const Decision& baseline = tuner.decisions().front();
  EXPECT_NE(baseline.reason.find("stationary after"), std::string::npos) << baseline.reason;
  // The warm-up's 3% lie mostly behind it: at least ~1.5 time constants (300 iterations) waited.
  EXPECT_GE(tuner.stationary_wait_iterations(), 300u);
  EXPECT_LT(tuner.stationary_wait_iterations(), 1500u);
}

TEST(Tuner, AnAaTestHoldsTheStartValueDespiteDrift) {
  // Every candidate is the start (a dry run): whatever the search saw was drift or noise. The old tuner,
  // comparing every candidate with one baseline, settled on a candidate measured after the energy rose.
  std::size_t held = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Tuner tuner(power_config());
    drive(tuner, warming_flat, 3000, 100 + seed);
    // The first search's outcome: the energy keeps rising by 2% a minute after it, and the drift watch may
    // search again (a search that may still go on when the job ends).
    const auto first_settle = std::find_if(tuner.decisions().begin(), tuner.decisions().end(),
                                           [](const Decision& d) { return d.kind == DecisionKind::kSettle; });
    ASSERT_NE(first_settle, tuner.decisions().end()) << "seed " << seed;
    if (first_settle->value == 300) {
      ++held;
      EXPECT_NE(first_settle->reason.find("no setting beats the start value within the noise"),
                std::string::npos)
          << first_settle->reason;
    }
  }
  EXPECT_GE(held, 19u);
}

TEST(Tuner, ComparesEachCandidateWithTheStartValueMeasuredNextToIt) {
  // Energy falls 6% per minute while the search runs (a GPU cooling down after a hot start, past the
  // stationarity test's reach): a candidate measured later looks better than the baseline by the drift
  // alone. Measured against the start value next to it, none does.
  const auto cooling = [](double, std::uint64_t i) {
    const double t_s = 0.1 * static_cast<double>(i);
    return Point{0.1, 20 * (1 - 0.06 * std::max(0.0, t_s - 10) / 60)};
  };
  std::size_t held = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    Tuner tuner(power_config());
    drive(tuner, cooling, 2000, 200 + seed);
    // The first search's outcome (the energy keeps falling after it: the drift watch may search again).
    const auto first_settle = std::find_if(tuner.decisions().begin(), tuner.decisions().end(),
                                           [](const Decision& d) { return d.kind == DecisionKind::kSettle; });
    ASSERT_NE(first_settle, tuner.decisions().end()) << "seed " << seed;
    held += first_settle->value == 300;
    // It went back to the start value at least every start_check_interval_s (30 s: 300 iterations here)
    // plus one probe (at most 45 iterations and the warm-up) and its own measurement (8 and the warm-up),
    // until it settled.
    std::uint64_t last_start = tuner.decisions().front().at_iteration;  // the baseline ended here
    for (auto d = tuner.decisions().begin(); d != first_settle; ++d) {
      if (d->value != 300) continue;
      EXPECT_LE(d->at_iteration - last_start, 300u + 50u + 13u) << d->reason;
      last_start = d->at_iteration;
    }
  }
  EXPECT_GE(held, 9u);
}

TEST(Tuner, ConfirmsTheChoiceAgainstTheStartValueBeforeHoldingIt) {
  Tuner tuner(power_config());
  drive(tuner, bowl, 1500, 51);
  ASSERT_TRUE(tuner.settled());
  EXPECT_FALSE(tuner.held_start());
  const auto& trace = tuner.decisions();
  ASSERT_GE(trace.size(), 2u);
  // The settle follows a measurement of the settled value right after one of the start value.
  EXPECT_NE(trace.back().reason.find("confirmed"), std::string::npos) << trace.back().reason;
  EXPECT_NE(trace[trace.size() - 2].reason.find("confirming it next to the start value"), std::string::npos)
      << trace[trace.size() - 2].reason;
  EXPECT_LT(trace.back().interval_high, 1.0);  // beats the start value beyond its interval
  // A confirmation passes only on all of its iterations: stopping at the first of up to eleven looks that
  // beat the start value let noise pass more often than the interval says.
  EXPECT_EQ(trace.back().iterations, power_config().max_probe_iterations) << trace.back().reason;
}

TEST(Tuner, SpendsIterationsToSpareNextToTheFittedOptimumWithinTheProfilingBudget) {
  const auto spare = [](const Tuner& t) {
    return std::count_if(t.decisions().begin(), t.decisions().end(), [](const Decision& d) {
      return d.reason.find("iterations to spare") != std::string::npos;
    });
  };
  std::size_t refined = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    TunerConfig config = power_config();
    config.min_value =
        150;  // 31 candidates, as the benchmark's V100: the golden section leaves some to spare
    Tuner tuner = settle_on_bowl(config, seed);
    // (None when the candidates around the fitted optimum were all measured already.)
    refined += spare(tuner) > 0;
    EXPECT_LE(tuner.profiling_iterations(), config.profiling_budget) << "seed " << seed;
    EXPECT_LE(bowl(*tuner.settled_value()).energy_j, bowl(180).energy_j * 1.01) << "seed " << seed;
    config.profiling_budget = 0;  // none to spare
    EXPECT_EQ(spare(settle_on_bowl(config, seed)), 0) << "seed " << seed;
  }
  EXPECT_GE(refined, 3u);
}

TEST(Tuner, TakesASpareCandidateOnlyWhileItAndTheEndStillFitTheProfilingBudget) {
  // A spare candidate is measured only while one more probe, the confirmation and a measurement of the
  // start value fit in what is left of profiling_budget: so a search that took one ends within the budget,
  // however tight (the golden section alone may pass a tight budget; then no spare is taken).
  int with_spares = 0;
  for (const std::uint64_t budget : {150u, 165u, 180u, 200u}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      TunerConfig config = power_config();
      config.min_value = 150;
      config.profiling_budget = budget;
      const Tuner tuner = settle_on_bowl(config, seed);
      const bool spared = std::any_of(
          tuner.decisions().begin(), tuner.decisions().end(),
          [](const Decision& d) { return d.reason.find("iterations to spare") != std::string::npos; });
      with_spares += spared;
      if (spared) {
        EXPECT_LE(tuner.profiling_iterations(), budget) << "budget " << budget << ", seed " << seed;
      }
    }
  }
  EXPECT_GE(with_spares, 10);  // the tight budgets are exercised, not skipped
}

TEST(Tuner, ASearchCapAboveTheProbesMaximumIsTheMaximum) {
  // Lowering the maximum alone is no error: the search's cap (11 by default) is taken as the maximum.
  TunerConfig c = power_config();
  c.max_probe_iterations = 8;
  const Tuner tuner = settle_on_bowl(c, 1);
  for (const std::uint64_t n : capped_candidate_probes(tuner)) EXPECT_LE(n, 8u);
}

TEST(CandidateGrid, IsMinPlusStepsThenMaxAndTheStartValueWithoutAccumulatedDrift) {
  TunerConfig c;
  c.min_value = 100;
  c.max_value = 101.05;  // not on the grid: max itself is a value too
  c.step = 0.1;          // 0.1 summed ten times is not 1.0 in binary; min + k * step is as exact as it gets
  c.start_value = 100.55;
  const std::vector<double> values = knob_values(c);
  ASSERT_EQ(values.size(), 12u);
  for (std::size_t k = 0; k + 1 < values.size(); ++k)
    EXPECT_EQ(values[k], 100 + static_cast<double>(k) * 0.1);
  EXPECT_EQ(values.back(), 101.05);
  // The tuner's grid adds the start value (the GPU's own setting, not one the policy must allow), once.
  const std::vector<double> grid = candidate_grid(c);
  ASSERT_EQ(grid.size(), 13u);
  EXPECT_TRUE(std::is_sorted(grid.begin(), grid.end()));
  EXPECT_EQ(std::count(grid.begin(), grid.end(), 100.55), 1);
  for (double v : values) EXPECT_EQ(std::count(grid.begin(), grid.end(), v), 1) << v;
  c.start_value = 100.5;  // on the grid already (as 100 + 5 * 0.1): not added twice
  EXPECT_EQ(candidate_grid(c).size(), 12u);
}

}  // namespace
}  // namespace wattwise::tune
