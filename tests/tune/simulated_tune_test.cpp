#include "tune/simulated_tune.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "analysis/metrics.hpp"
#include "experiment/replay_table.hpp"

namespace wattwise::tune {
namespace {

TEST(SimulatedTune, IsDeterministicForASeed) {
  const auto a = simulate("v100:resnet50", TunerConfig{}, 7, 3000);
  const auto b = simulate("v100:resnet50", TunerConfig{}, 7, 3000);
  const auto c = simulate("v100:resnet50", TunerConfig{}, 8, 3000);
  ASSERT_TRUE(a.settled_value);
  EXPECT_EQ(a.settled_value, b.settled_value);
  EXPECT_EQ(a.profiling_iterations, b.profiling_iterations);
  EXPECT_EQ(a.decisions.size(), b.decisions.size());
  EXPECT_EQ(a.energy_j, b.energy_j);
  EXPECT_EQ(a.time_s, b.time_s);
  // Another seed is another job: its noise differs, so its energy does.
  EXPECT_NE(a.energy_j, c.energy_j);
}

TEST(SimulatedTune, TakesTheRangeAndStartFromTheSimulatedGpu) {
  const auto r = simulate("v100:resnet50", TunerConfig{}, 1, 10);
  EXPECT_EQ(r.config.min_value, 150);
  EXPECT_EQ(r.config.max_value, 300);
  EXPECT_EQ(r.config.start_value, 300);
  EXPECT_EQ(r.iterations, 10u);
  EXPECT_GT(r.energy_j, 0);
  EXPECT_GT(r.time_s, 0);
}

TEST(SimulatedTune, SettlesNearTheNoiseFreeOptimumAndSavesEnergy) {
  const SimulatedJob job("v100:resnet50", TuneKnob::kPowerLimit);
  double best_energy_j = 1e300;
  for (double w = 150; w <= 300; w += 5) best_energy_j = std::min(best_energy_j, job.mean_at(w).energy_j);
  const auto r = simulate("v100:resnet50", TunerConfig{}, 3, 5000);
  ASSERT_TRUE(r.settled_value);
  EXPECT_LE(job.mean_at(*r.settled_value).energy_j, best_energy_j * 1.02);
  // The whole job at the start limit would cost this much; tuning must save energy.
  EXPECT_LT(r.energy_j, job.mean_at(300).energy_j * 5000 * 0.95);
}

TEST(SimulatedTune, AGivenRangeKeepsTheGpuDefaultAsStartOrItsTop) {
  TunerConfig config;
  config.min_value = 200;
  const auto low_end_given = simulate("v100:resnet50", config, 1, 10);
  EXPECT_EQ(low_end_given.config.min_value, 200);
  EXPECT_EQ(low_end_given.config.max_value, 300);
  EXPECT_EQ(low_end_given.config.start_value, 300);
  config.max_value = 250;
  const auto both_given = simulate("v100:resnet50", config, 1, 10);
  EXPECT_EQ(both_given.config.max_value, 250);
  EXPECT_EQ(both_given.config.start_value, 250);  // the default (300 W) lies outside: the range's top
}

TEST(SimulatedTune, ARangeBeyondTheGpuIsAUsageError) {
  TunerConfig config;
  config.min_value = 100;  // the V100's lowest limit is 150 W
  try {
    simulate("v100:resnet50", config, 1, 10);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("[150, 300] W"), std::string::npos) << e.what();
  }
}

TEST(SimulatedTune, UnknownProfileIsAUsageError) {
  try {
    SimulatedJob("v100:nosuchmodel", TuneKnob::kPowerLimit);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("resnet50"), std::string::npos) << e.what();
  }
}

// A replayed table: the published V100 ResNet-50 rows (shared/reference/v100_cnn_power_caps.csv), in a file
// of its own per process (ctest runs these tests in parallel processes), removed when done.
class ReplayedTable {
 public:
  ReplayedTable() : path_(dir_ / "replay.csv") {
    std::ofstream(path_) << "label,power_limit_W,avg_power_W,energy_kJ,time_s\n"
                            "default,300,262.3,69.87,266.4\n"
                            "min_E,150,149.0,54.10,363.1\n"
                            "min_EDP,195,190.6,56.59,296.9\n"
                            "mid,240,231.5,63.10,272.6\n";
  }
  std::string spec() const { return "csv:" + path_.string(); }

 private:
  wattwise::testing::TempDir dir_{"wattwise-test-tune-replay"};
  std::filesystem::path path_;
};

TEST(SimulatedTune, SmClockOnAReplayedTableIsAUsageError) {
  const ReplayedTable table;
  TunerConfig config;
  config.knob = TuneKnob::kSmClock;
  EXPECT_THROW(simulate(table.spec(), config, 1, 100, {}, false, experiment::read_replay_table), Error);
}

TEST(SimulatedTune, TunesAReplayedTableOverItsMeasuredRange) {
  const ReplayedTable table;
  const auto r = simulate(table.spec(), TunerConfig{}, 2, 3000, {}, false, experiment::read_replay_table);
  EXPECT_EQ(r.config.min_value, 150);
  EXPECT_EQ(r.config.max_value, 300);
  ASSERT_TRUE(r.settled_value);
  // Energy falls all the way down to 150 W in this table.
  EXPECT_LE(*r.settled_value, 165);
}

// The published V100 ResNet-152 rows (../shared/reference/v100_cnn_power_caps.csv) as a replay table in
// `dir`; its path.
std::string published_resnet152_rows(const testing::TempDir& dir) {
  const std::string path = (dir.path() / "replay.csv").string();
  std::ofstream(path) << "label,power_limit_W,avg_power_W,energy_kJ,time_s\n"
                         "default,300,273.7,186.948,683.0\n"
                         "min_E,150,143.2,125.352,875.3\n"
                         "min_EDP,185,176.3,137.879,782.1\n"
                         "min_EDS1.5,255,233.7,165.032,706.2\n";
  return path;
}

TEST(SimulatedTune, TheFinalFitOfAReplayedEdpPoolsEnoughCandidatesToFindItsKink) {
  // The published V100 ResNet-152 rows: EDP falls gently from 150 W to a kink at 185 W and rises twice as
  // steeply above it; within 1% of its lowest only at 175-190 W. A candidate's probe (11 iterations) knows
  // EDP to about +-2.5%, so the choice rests on the fit across the candidates: over those within 30 W of
  // the lowest mean (the sweeps' window, analysis::kFitHalfWidthFraction) it was within 1% on 164 of these
  // 200 seeds, over those within 45 W (kTunerFitHalfWidthFraction) on 169. A small margin on one curve
  // (bench_tune_regret's 1440 cases are the evidence), but deterministic: seeded noise, no clock.
  const testing::TempDir dir{"wattwise-test-tune-resnet152"};
  const std::string path = published_resnet152_rows(dir);
  TunerConfig config;
  config.metric = analysis::parse_metric("edp");
  const SimulatedJob job("csv:" + path, TuneKnob::kPowerLimit, experiment::read_replay_table);
  const auto edp = [&](double w) {
    const IterationMean m = job.mean_at(w);
    return m.energy_j * m.time_s;
  };
  double best = edp(300);
  for (double w = 150; w < 300; w += 5) best = std::min(best, edp(w));
  int within = 0;
  for (std::uint64_t seed = 161; seed <= 360; ++seed) {
    const auto r = simulate("csv:" + path, config, seed, 1500, IterationNoise::typical(), false,
                            experiment::read_replay_table);
    ASSERT_TRUE(r.settled_value) << "seed " << seed;
    within += edp(*r.settled_value) <= 1.01 * best;
  }
  EXPECT_GE(within, 167);
}

TEST(SimulatedTune, TunesTheSmClockOverTheSupportedClocks) {
  TunerConfig config;
  config.knob = TuneKnob::kSmClock;
  const auto r = simulate("v100:resnet50", config, 1, 3000);
  EXPECT_EQ(r.config.max_value, 1530);
  EXPECT_EQ(r.config.min_value, 135);
  EXPECT_EQ(r.config.step, 7.5);
  ASSERT_TRUE(r.settled_value);
  EXPECT_LT(*r.settled_value, 1530);
}

TEST(SimulatedTune, TheTypicalJobWarmsUpAndItsIterationsAreAlike) {
  const SimulatedJob job("v100:resnet50", TuneKnob::kPowerLimit);
  IterationNoiseSource noise(5, IterationNoise::typical());
  // Energy per iteration over the first 10 s and over 10 s two minutes in, at the same limit; then ~300
  // iterations for their correlation.
  const auto mean_energy = [&](double from_s, double for_s, std::vector<double>* values) {
    double sum = 0;
    int n = 0;
    for (double t = from_s; t < from_s + for_s; ++n) {
      const IterationMean it = job.iterate(300, 1e9, t, noise);
      t += it.time_s;
      sum += it.energy_j;
      if (values) values->push_back(it.energy_j);
    }
    return sum / n;
  };
  std::vector<double> values;
  const double early = mean_energy(0, 10, nullptr);
  const double later = mean_energy(120, 10, nullptr);
  mean_energy(200, 100, &values);
  EXPECT_GT(later / early - 1, 0.01);
  // Neighbouring iterations are alike: their lag-1 correlation is well above zero.
  double mean = 0;
  for (double v : values) mean += v / static_cast<double>(values.size());
  double ss = 0, sp = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    ss += (values[i] - mean) * (values[i] - mean);
    if (i > 0) sp += (values[i] - mean) * (values[i - 1] - mean);
  }
  EXPECT_GT(sp / ss, 0.1);
}

TEST(SimulatedTune, ADryRunOnADriftingGpuHoldsTheStartValue) {
  // The A/A test: every candidate runs at the start value, on a GPU that warms up and wanders.
  int held = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto r = simulate("v100:resnet50", TunerConfig{}, seed, 3000, IterationNoise::typical(), true);
    ASSERT_TRUE(r.settled_value) << "seed " << seed;
    held += *r.settled_value == r.config.start_value && r.held_start;
  }
  EXPECT_GE(held, 19);
}

// How often the fit of time at a 10% budget's edge readmitted a candidate that was then never measured, over
// `seeds` replayed ResNet-152 runs with `profiling_budget` (docs/tune.md "The search", step 6).
int readmitted_never_measured(std::uint64_t profiling_budget, std::uint64_t seeds) {
  const testing::TempDir dir{"wattwise-test-tune-resnet152-edge"};
  const std::string path = published_resnet152_rows(dir);
  TunerConfig config;
  config.max_slowdown = 0.10;
  config.profiling_budget = profiling_budget;
  const std::string edge_reason = "the budget's edge from a fit of time across the candidates: ";
  int never = 0;
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const auto r = simulate("csv:" + path, config, seed, 1500, IterationNoise::typical(), false,
                            experiment::read_replay_table);
    for (const Decision& readmit : r.decisions) {
      const auto at = readmit.reason.find(edge_reason);
      if (at == std::string::npos) continue;
      const double edge = std::stod(readmit.reason.substr(at + edge_reason.size()));
      never += std::none_of(r.decisions.begin(), r.decisions.end(), [&](const Decision& d) {
        return d.kind == DecisionKind::kProbe && d.value == edge;
      });
    }
  }
  return never;
}

TEST(SimulatedTune, ABudgetsEdgeTheFitReadmitsIsMeasuredWhenTheProfilingBudgetHasRoom) {
  // The best limit under the budget (215 W) lies 0.2% of time inside it; single probes often put it over,
  // and the fit of time near the edge readmits it. Within the default 200 profiling iterations the bracket
  // has sometimes left it below and no probe fits any more: the choice is among the measured candidates
  // (bench_tune_regret's replay:resnet152, seed 122: 215 W readmitted, 220 W settled). With 250 the spare
  // iterations reach it first.
  EXPECT_GT(readmitted_never_measured(200, 600), 0) << "docs/tune.md step 6 describes a case that is gone";
  EXPECT_EQ(readmitted_never_measured(250, 600), 0);
}

}  // namespace
}  // namespace wattwise::tune
