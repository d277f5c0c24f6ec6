#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>

#include "runner_test_support.hpp"
#include "workload/stop_signals.hpp"
#include "../support/default_signals.hpp"

namespace wattwise::experiment {
namespace {

// These tests raise stop signals at themselves: they must be handled here even when the test runner was
// started with one ignored (nohup, a script's background job), which wattwise's StopSignals would respect.
const bool kDefaultStopSignals = (wattwise::testing::default_stop_signals(), true);

using testing::fake_measurement;
using testing::FakeSweep;
using testing::power_limit_spec;

std::vector<std::size_t> stored_indices(const std::filesystem::path& db) {
  std::vector<std::size_t> indices;
  for (const auto& run : store::ResultsStore::open_read_only(db).runs()) indices.push_back(run.plan_index);
  std::sort(indices.begin(), indices.end());
  return indices;
}

TEST(RunnerFailures, FailedRunsAreRecordedAndTheSweepGoesOn) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400"}, 1));
  sweep.options.max_failures = 0;
  MonotonicClock clock;
  int n = 0;
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        return fake_measurement(sweep.system, {0, 1}, n++ == 1 ? 3 : 0);
      },
      clock);
  EXPECT_EQ(outcome.end, SweepEnd::kCompleted);
  EXPECT_EQ(outcome.runs_done, 3u);
  EXPECT_EQ(outcome.runs_failed, 1u);
  EXPECT_EQ(outcome.exit_code(), 0);
  const auto runs = store::ResultsStore::open_read_only(sweep.options.db_path).runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].exit_status, 3);
  EXPECT_EQ(runs[1].error, "exit status 3");
  EXPECT_TRUE(runs[0].error.empty());
}

TEST(RunnerFailures, MaxFailuresStopsTheSweepAndRestores) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400", "500"}, 1));
  sweep.options.max_failures = 2;
  MonotonicClock clock;
  // A crashing job: killed by SIGSEGV.
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        return fake_measurement(sweep.system, {0, 1}, 128 + SIGSEGV, SIGSEGV);
      },
      clock);
  EXPECT_EQ(outcome.end, SweepEnd::kTooManyFailures);
  EXPECT_EQ(outcome.runs_done, 2u);
  EXPECT_EQ(outcome.exit_code(), 1);
  EXPECT_NE(outcome.summary().find("--max-failures"), std::string::npos);
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 650);
  const auto runs = store::ResultsStore::open_read_only(sweep.options.db_path).runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0].error.find("killed by signal"), std::string::npos) << runs[0].error;
}

// issue 10, item 5: a job that handles SIGINT/SIGTERM (a checkpoint, then exit 0) used to be stored as a
// success and the sweep went on. A stop signal during a run cuts that run, whatever the job's status.
TEST(RunnerInterrupt, AStopSignalDuringARunStopsTheSweepWithoutStoringThatRunAndResumeRunsItAgain) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400"}, 2, plan::RunOrder::kRandom));
  MonotonicClock clock;
  int n = 0;
  std::vector<std::size_t> first_runs;
  // SIGINT reaches wattwise during the third run; the job handled it and exited 0.
  auto first = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun& run) {
        first_runs.push_back(run.index);
        if (++n == 3) ::raise(SIGINT);
        return fake_measurement(sweep.system, {0, 1}, 0);
      },
      clock);
  EXPECT_EQ(first.end, SweepEnd::kStopSignal);
  EXPECT_EQ(first.signal, SIGINT);
  EXPECT_EQ(first.exit_code(), 130);
  EXPECT_EQ(first.runs_done, 2u);
  ASSERT_EQ(first_runs.size(), 3u);  // no fourth run started
  std::vector<std::size_t> stored_first(first_runs.begin(), first_runs.begin() + 2);
  std::sort(stored_first.begin(), stored_first.end());
  EXPECT_EQ(stored_indices(sweep.options.db_path), stored_first);  // the cut run is not there
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_TRUE(sweep.journals().empty());

  sweep.options.resume = true;
  std::vector<std::size_t> resumed;
  auto second = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun& run) {
        resumed.push_back(run.index);
        return fake_measurement(sweep.system, {0, 1});
      },
      clock);
  EXPECT_EQ(second.end, SweepEnd::kCompleted);
  EXPECT_EQ(second.runs_skipped, 2u);
  EXPECT_EQ(second.runs_done, 4u);
  EXPECT_NE(std::find(resumed.begin(), resumed.end(), first_runs[2]), resumed.end());
  EXPECT_EQ(stored_indices(sweep.options.db_path), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 650);
}

TEST(RunnerInterrupt, AStopSignalBeforeTheFirstRunStartsNoRun) {
  FakeSweep sweep(power_limit_spec({"200", "300"}, 1));
  MonotonicClock clock;
  workload::StopSignals signals;  // installed by the CLI in wattwise; the runner uses it
  ::raise(SIGTERM);
  int runs = 0;
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        ++runs;
        return fake_measurement(sweep.system, {0, 1});
      },
      clock);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(outcome.exit_code(), 128 + SIGTERM);
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
}

TEST(RunnerInterrupt, AJobEndedByAForwardedSignalIsNotStoredAndStopsTheSweep) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400"}, 1));
  MonotonicClock clock;
  int n = 0;
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        const bool stopped = ++n == 2;
        return fake_measurement(sweep.system, {0, 1}, stopped ? 128 + SIGTERM : 0,
                                stopped ? std::optional<int>(SIGTERM) : std::nullopt);
      },
      clock);
  EXPECT_EQ(outcome.end, SweepEnd::kStopSignal);
  EXPECT_EQ(outcome.exit_code(), 128 + SIGTERM);
  EXPECT_EQ(stored_indices(sweep.options.db_path), (std::vector<std::size_t>{0}));
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
}

TEST(RunnerInterrupt, AnExceptionDuringARunRestoresBeforeItLeaves) {
  FakeSweep sweep(power_limit_spec({"200", "300"}, 1));
  MonotonicClock clock;
  EXPECT_THROW(run_sweep(
                   sweep.system, sweep.options,
                   [&](const plan::PlannedRun&) -> measure::Measurement {
                     throw environment_error("command not found: nope");
                   },
                   clock),
               Error);
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 650);
  EXPECT_TRUE(sweep.journals().empty());
}

TEST(RunnerInterrupt, ResumeOfAnotherPlanIsRefused) {
  FakeSweep sweep(power_limit_spec({"200", "300"}, 1));
  MonotonicClock clock;
  run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        return fake_measurement(sweep.system, {0, 1});
      },
      clock);
  sweep.options.plan = plan::make_plan(power_limit_spec({"200", "300"}, 2));
  sweep.options.resume = true;
  EXPECT_THROW(run_sweep(
                   sweep.system, sweep.options,
                   [&](const plan::PlannedRun&) {
                     return fake_measurement(sweep.system, {0, 1});
                   },
                   clock),
               Error);
}

TEST(RunnerRestore, ARestoreThatFailsOnOneGpuRestoresTheOtherAndKeepsTheJournal) {
  FakeSweep sweep(power_limit_spec({"300"}, 1));
  MonotonicClock clock;
  auto outcome = run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun&) {
        sweep.system.fake(1).fail_set_power_limit = true;  // the GPU refuses from now on
        return fake_measurement(sweep.system, {0, 1});
      },
      clock);
  EXPECT_FALSE(outcome.restore.all_ok());
  EXPECT_EQ(outcome.exit_code(), 3);
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 300);
  EXPECT_EQ(sweep.journals().size(), 1u);
}

}  // namespace
}  // namespace wattwise::experiment
