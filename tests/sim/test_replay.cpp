// Replayed profiles (--simulate csv:PATH): a table of measured runs becomes a simulated job.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "analysis/runs_csv.hpp"
#include "core/error.hpp"
#include "experiment/replay_table.hpp"
#include "sim/replay.hpp"
#include "sim/unsampled_run.hpp"

namespace wattwise::sim {
namespace {

// Three limits, one row each (per setting): 150 W 12 s 1500 J, 200 W 10 s 1700 J, 300 W 8 s 2000 J.
constexpr const char* kPerSetting = "power_limit_w,time_s,energy_j\n150,12,1500\n200,10,1700\n300,8,2000\n";

// The tables written here go into one directory for the whole test program, removed when it ends.
std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  static const wattwise::testing::TempDir dir("wattwise-replay");
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

ReplayCurve curve_of(const std::string& csv) {
  std::istringstream in(csv);
  std::vector<ReplayRun> runs;
  for (const auto& run : analysis::parse_runs_csv(in, "t.csv"))
    runs.push_back({run.setting, run.time_s, run.energy_j, run.ok});
  return replay_curve_of(runs, "t.csv");
}

Simulation quiet_replay(const std::string& csv, const std::string& name) {
  const auto path = write_temp(name, csv);
  Simulation sim = make_simulation("csv:" + path.string(), {}, experiment::read_replay_table);
  sim.options.noise_fraction = 0;
  sim.options.power_noise_fraction = 0;
  return sim;
}

TEST(ReplayCurve, ReproducesTheTableAtMeasuredLimits) {
  const ReplayCurve curve = curve_of(kPerSetting);
  EXPECT_DOUBLE_EQ(curve.at(150).time_s, 12);
  EXPECT_DOUBLE_EQ(curve.at(200).energy_j, 1700);
  EXPECT_DOUBLE_EQ(curve.at(300).time_s, 8);
}

TEST(ReplayCurve, InterpolatesLinearlyBetweenMeasuredLimits) {
  const ReplayCurve curve = curve_of(kPerSetting);
  EXPECT_DOUBLE_EQ(curve.at(175).time_s, 11);
  EXPECT_DOUBLE_EQ(curve.at(175).energy_j, 1600);
  EXPECT_DOUBLE_EQ(curve.at(250).time_s, 9);
  EXPECT_DOUBLE_EQ(curve.at(250).energy_j, 1850);
}

TEST(ReplayCurve, RefusesLimitsOutsideTheMeasuredRange) {
  const ReplayCurve curve = curve_of(kPerSetting);
  EXPECT_THROW(curve.at(149), Error);
  EXPECT_THROW(curve.at(301), Error);
  try {
    curve.at(100);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("150-300 W"), std::string::npos) << e.what();
  }
}

TEST(ReplayCurve, RowsPerRunAreAveragedAndGiveTheNoise) {
  const ReplayCurve curve = curve_of(
      "power_limit_w,time_s,energy_j,repeat\n200,9,900,0\n200,11,1100,1\n300,8,1000,0\n300,8,1000,1\n");
  EXPECT_DOUBLE_EQ(curve.at(200).time_s, 10);
  EXPECT_DOUBLE_EQ(curve.at(200).energy_j, 1000);
  // 200 W: times 9 and 11, CV = sqrt(2) / 10; 300 W: CV 0; pooled as the root mean square.
  EXPECT_NEAR(curve.time_noise_fraction(), std::sqrt((0.02 + 0) / 2), 1e-12);
  EXPECT_NEAR(curve.power_noise_fraction(), 0, 1e-12);  // power 100 W in every run
}

TEST(ReplayCurve, WithoutRepeatsTheNoiseIsTheDocumentedDefault) {
  const ReplayCurve curve = curve_of(kPerSetting);
  EXPECT_DOUBLE_EQ(curve.time_noise_fraction(), 0.01);
  EXPECT_DOUBLE_EQ(curve.power_noise_fraction(), 0.005);
}

TEST(ReplayCurve, RefusesAKnobOtherThanThePowerLimit) {
  EXPECT_THROW(curve_of("power_limit_w,batch,time_s,energy_j\n150,64,12,1500\n"), Error);
  EXPECT_THROW(curve_of("batch,time_s,energy_j\n64,12,1500\n"), Error);
}

TEST(ReplayedSimulation, ARunAtAMeasuredLimitGivesTheTablesTimeAndEnergy) {
  Simulation sim = quiet_replay(kPerSetting, "wattwise-replay-measured.csv");
  for (const double limit : {150.0, 200.0, 300.0}) {
    sim.system->gpu(0).set_power_limit_w(limit);
    const UnsampledRun run = run_unsampled(sim, 7);
    const auto expected = sim.profile.workload.replay->at(limit);
    EXPECT_NEAR(run.time_s, expected.time_s, 1e-6 * expected.time_s) << limit;
    EXPECT_NEAR(run.energy_j, expected.energy_j, 1e-3 * expected.energy_j) << limit;
  }
}

TEST(ReplayedSimulation, ARunBetweenMeasuredLimitsIsInterpolated) {
  Simulation sim = quiet_replay(kPerSetting, "wattwise-replay-between.csv");
  sim.system->gpu(0).set_power_limit_w(250);
  const UnsampledRun run = run_unsampled(sim, 7);
  EXPECT_NEAR(run.time_s, 9, 1e-6);
  EXPECT_NEAR(run.energy_j, 1850, 1e-3 * 1850);
}

TEST(ReplayedSimulation, TheGpuRefusesLimitsOutsideTheTable) {
  Simulation sim = quiet_replay(kPerSetting, "wattwise-replay-range.csv");
  EXPECT_EQ(sim.system->gpu(0).power_limits()->default_w, 300);
  EXPECT_THROW(sim.system->gpu(0).set_power_limit_w(140), Error);
  EXPECT_THROW(sim.system->gpu(0).set_power_limit_w(310), Error);
}

TEST(ReplayedSimulation, RepeatsInTheTableBecomeRunToRunNoise) {
  const auto path = write_temp("wattwise-replay-noisy.csv",
                               "power_limit_w,time_s,energy_j\n300,9.5,950\n300,10.5,1050\n150,12,900\n");
  Simulation sim = make_simulation("csv:" + path.string(), {}, experiment::read_replay_table);
  EXPECT_NEAR(sim.options.noise_fraction, std::sqrt(0.005), 1e-12);  // CV of 9.5 and 10.5 over repeats
  double min_t = 1e9, max_t = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const UnsampledRun run = run_unsampled(sim, seed);
    min_t = std::min(min_t, run.time_s);
    max_t = std::max(max_t, run.time_s);
  }
  EXPECT_GT(max_t - min_t, 0.02 * 10);  // a 7% spread shows over 20 runs
}

TEST(ReplayedSimulation, AMissingFileIsAnEnvironmentError) {
  try {
    make_simulation("csv:/no/such/table.csv", {}, experiment::read_replay_table);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment) << e.what();
  }
}

TEST(ReplayedSimulation, WithoutATableReaderCsvIsAUsageError) {
  const auto path = write_temp("wattwise-replay-unread.csv", kPerSetting);
  try {
    make_simulation("csv:" + path.string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::sim
