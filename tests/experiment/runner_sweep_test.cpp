#include <gtest/gtest.h>

#include <algorithm>

#include "runner_test_support.hpp"

namespace wattwise::experiment {
namespace {

using testing::fake_measurement;
using testing::FakeSweep;
using testing::power_limit_spec;

// The limit GPU 0 had while each job ran, in the order the jobs ran.
std::vector<double> limits_seen(FakeSweep& sweep, MonotonicClock& clock, SweepOutcome* outcome = nullptr) {
  std::vector<double> seen;
  auto result = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        seen.push_back(sweep.system.fake(0).limit_w());
        return fake_measurement(sweep.system, sweep.options.gpu_indices);
      },
      clock);
  if (outcome) *outcome = result;
  return seen;
}

TEST(RunnerSweep, AscendingOrderInterleavesRepeatsAndRestoresTheCapturedLimit) {
  FakeSweep sweep(power_limit_spec({"300", "200", "400"}, 2));
  MonotonicClock clock;
  SweepOutcome outcome;
  EXPECT_EQ(limits_seen(sweep, clock, &outcome), (std::vector<double>{200, 300, 400, 200, 300, 400}));
  EXPECT_EQ(outcome.end, SweepEnd::kCompleted);
  EXPECT_EQ(outcome.runs_done, 6u);
  EXPECT_EQ(outcome.exit_code(), 0);
  EXPECT_TRUE(outcome.restore.all_ok());
  // Back at the site's 650 W, not the vendor's 700 W default, and the journal is gone.
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 650);
  EXPECT_TRUE(sweep.journals().empty());
}

TEST(RunnerSweep, DescendingOrderRunsHighestFirst) {
  FakeSweep sweep(power_limit_spec({"300", "200", "400"}, 1, plan::RunOrder::kDescending));
  MonotonicClock clock;
  EXPECT_EQ(limits_seen(sweep, clock), (std::vector<double>{400, 300, 200}));
}

TEST(RunnerSweep, RandomOrderRunsThePlanOrder) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400", "500"}, 3, plan::RunOrder::kRandom));
  std::vector<double> planned;
  for (const auto& run : sweep.options.plan.runs) planned.push_back(*run.hardware.power_limit_w);
  MonotonicClock clock;
  const auto seen = limits_seen(sweep, clock);
  EXPECT_EQ(seen, planned);
  EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end()));
}

TEST(RunnerSweep, EveryRunIsStoredWithTheLimitReadBackFromEachGpu) {
  FakeSweep sweep(power_limit_spec({"250", "450"}, 2));
  MonotonicClock clock;
  limits_seen(sweep, clock);
  const auto runs = store::ResultsStore::open_read_only(sweep.options.db_path).runs();
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& run : runs) {
    const double asked = std::stod(run.settings.at(0).value);
    ASSERT_EQ(run.gpus.size(), 2u);
    for (const auto& gpu : run.gpus) {
      ASSERT_TRUE(gpu.enforced_power_limit_w.has_value());
      EXPECT_EQ(*gpu.enforced_power_limit_w, asked);
      EXPECT_EQ(gpu.energy_j, 100);
    }
    EXPECT_EQ(run.energy_j, 200);
    EXPECT_EQ(run.exit_status, 0);
    EXPECT_TRUE(run.error.empty());
  }
}

TEST(RunnerSweep, JobKnobsOnlyChangeNothingAndWriteNoJournal) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::Knob{"batch", plan::KnobKind::kJob, {"32", "64"}, false});
  FakeSweep sweep(spec);
  MonotonicClock clock;
  std::vector<std::string> batches;
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun& run) {
        batches.push_back(plan::substitute_params({"--batch={batch}"}, run.params).at(0));
        return fake_measurement(sweep.system, sweep.options.gpu_indices);
      },
      clock);
  EXPECT_EQ(batches, (std::vector<std::string>{"--batch=32", "--batch=64"}));
  EXPECT_FALSE(outcome.changed_hardware);
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
  EXPECT_FALSE(std::filesystem::exists(sweep.state_dir));
}

TEST(RunnerSweep, OutOfRangeLimitIsRefusedBeforeAnythingIsTouched) {
  FakeSweep sweep(power_limit_spec({"300", "900"}, 1));
  MonotonicClock clock;
  int jobs = 0;
  try {
    run_sweep(
        sweep.system, sweep.options,
        [&](const plan::PlannedRun&) {
          ++jobs;
          return fake_measurement(sweep.system, sweep.options.gpu_indices);
        },
        clock);
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("100-700 W"), std::string::npos) << e.what();
  }
  EXPECT_EQ(jobs, 0);
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
  EXPECT_FALSE(std::filesystem::exists(sweep.options.db_path));
  EXPECT_TRUE(sweep.journals().empty());
}

TEST(RunnerSweep, NoPermissionIsRefusedWithTheDriversNote) {
  FakeSweep sweep(power_limit_spec({"300"}, 1));
  sweep.system.fake(1).caps.power_limit_set = false;
  sweep.system.fake(1).caps.set_permission_note = "needs root";
  MonotonicClock clock;
  try {
    run_sweep(
        sweep.system, sweep.options,
        [&](const plan::PlannedRun&) { return fake_measurement(sweep.system, sweep.options.gpu_indices); },
        clock);
    FAIL() << "expected an environment error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("needs root"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
}

TEST(RunnerSweep, AnExistingDatabaseIsRefusedWithoutResume) {
  FakeSweep sweep(power_limit_spec({"300"}, 1));
  std::ofstream(sweep.options.db_path) << "x";
  MonotonicClock clock;
  EXPECT_THROW(
      run_sweep(
          sweep.system, sweep.options,
          [&](const plan::PlannedRun&) { return fake_measurement(sweep.system, sweep.options.gpu_indices); },
          clock),
      Error);
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
}

}  // namespace
}  // namespace wattwise::experiment
