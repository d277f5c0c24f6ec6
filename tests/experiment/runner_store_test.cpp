// The runner and the results store together: a full disk while a run's extras are written, resume of failed
// runs, another command refused on resume, a sweep in which every run fails.
#include <gtest/gtest.h>

#include "runner_test_support.hpp"

namespace wattwise::experiment {
namespace {

using testing::fake_measurement;
using testing::FakeSweep;
using testing::power_limit_spec;

SweepOutcome sweep_with_exit_codes(FakeSweep& sweep, const std::function<int(const plan::PlannedRun&)>& code,
                                   MonotonicClock& clock) {
  return run_sweep(
      sweep.system, sweep.options,
      [&](const plan::PlannedRun& run) {
        return fake_measurement(sweep.system, {0, 1}, code(run));
      },
      clock);
}

// Before: the trace was written after the run's commit (cut, no error), so the run stayed stored without
// its trace and --resume skipped it for good.
TEST(RunnerStore, AFullDiskWritingTheTraceLeavesTheRunOutRestoresAndResumeRunsIt) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400"}, 1));
  MonotonicClock clock;
  int writes = 0;
  sweep.options.keep_extras = [&](const plan::PlannedRun& run, const measure::Measurement&,
                                  store::RunRecord& record) {
    if (++writes == 2)
      throw environment_error(
          "disk full writing traces/run-0001.csv: free space and continue "
          "with --resume");
    record.traces.push_back({0, "trace of run " + std::to_string(run.index)});
  };
  try {
    sweep_with_exit_codes(
        sweep, [](const plan::PlannedRun&) { return 0; }, clock);
    FAIL() << "a full disk went unnoticed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
  }
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_EQ(sweep.system.fake(1).limit_w(), 650);
  EXPECT_TRUE(sweep.journals().empty());
  EXPECT_EQ(store::ResultsStore::open_read_only(sweep.options.db_path).completed_plan_indices(),
            (std::set<std::size_t>{0}));

  sweep.options.resume = true;
  std::vector<std::size_t> ran;
  const auto outcome = sweep_with_exit_codes(
      sweep,
      [&](const plan::PlannedRun& run) {
        ran.push_back(run.index);
        return 0;
      },
      clock);
  EXPECT_EQ(ran, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(outcome.exit_code(), 0);
}

// Before: completed_plan_indices() counted failed runs as done, so "fix the job and continue with --resume"
// ran nothing.
TEST(RunnerStore, ResumeRunsTheFailedRunsAgainAndEachPlanIndexIsStoredOnce) {
  FakeSweep sweep(power_limit_spec({"200", "300", "400"}, 1));
  sweep.options.max_failures = 0;
  MonotonicClock clock;
  auto first = sweep_with_exit_codes(
      sweep, [](const plan::PlannedRun& r) { return r.index == 1 ? 3 : 0; }, clock);
  EXPECT_EQ(first.runs_failed, 1u);
  EXPECT_EQ(first.exit_code(), 0);

  sweep.options.resume = true;
  std::vector<std::size_t> ran;
  auto second = sweep_with_exit_codes(
      sweep,
      [&](const plan::PlannedRun& run) {
        ran.push_back(run.index);
        return 0;
      },
      clock);
  EXPECT_EQ(ran, (std::vector<std::size_t>{1}));
  EXPECT_EQ(second.runs_skipped, 2u);
  EXPECT_EQ(second.runs_retried, 1u);
  EXPECT_NE(second.summary().find("1 failed before and ran again"), std::string::npos) << second.summary();
  const auto store = store::ResultsStore::open_read_only(sweep.options.db_path);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 3u);
  for (const auto& run : runs) EXPECT_TRUE(run.error.empty()) << run.plan_index;
  ASSERT_EQ(store.earlier_attempts().size(), 1u);
  EXPECT_EQ(store.earlier_attempts()[0].error, "exit status 3");
}

// Before: accepted silently, the results of both commands mixed in one database.
TEST(RunnerStore, ResumeWithAnotherCommandIsRefusedBeforeAnythingChanges) {
  FakeSweep sweep(power_limit_spec({"200", "300"}, 1));
  sweep.options.meta.command_argv = {"python", "train.py"};
  sweep.options.meta.command = "python train.py";
  MonotonicClock clock;
  int first_runs = 0;
  sweep_with_exit_codes(
      sweep, [&](const plan::PlannedRun&) { return ++first_runs == 2 ? 1 : 0; }, clock);

  sweep.options.resume = true;
  sweep.options.meta.command_argv = {"python", "other.py"};
  sweep.options.meta.command = "python other.py";
  sweep.system.fake(0).calls.clear();
  int jobs = 0;
  try {
    sweep_with_exit_codes(
        sweep, [&](const plan::PlannedRun&) { return ++jobs, 0; }, clock);
    FAIL() << "another command was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("the command was 'python train.py', now 'python other.py'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(jobs, 0);
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);
  EXPECT_TRUE(sweep.journals().empty());

  sweep.options.allow_mixed_results = true;
  const auto mixed = sweep_with_exit_codes(
      sweep, [&](const plan::PlannedRun&) { return ++jobs, 0; }, clock);
  EXPECT_EQ(jobs, 1);
  EXPECT_EQ(mixed.exit_code(), 0);
}

// Before: exit 0 and "sweep complete".
TEST(RunnerStore, ASweepInWhichEveryRunFailsExits1AndSaysSo) {
  FakeSweep sweep(power_limit_spec({"200", "300"}, 1));
  MonotonicClock clock;
  const auto outcome = sweep_with_exit_codes(
      sweep, [](const plan::PlannedRun&) { return 2; }, clock);
  EXPECT_EQ(outcome.end, SweepEnd::kCompleted);
  EXPECT_EQ(outcome.runs_failed, 2u);
  EXPECT_EQ(outcome.exit_code(), 1);
  EXPECT_NE(outcome.summary().find("every run failed (2 of 2)"), std::string::npos) << outcome.summary();
  EXPECT_EQ(sweep.system.fake(0).limit_w(), 650);

  // One success is enough for 0: the summary counts the failures.
  FakeSweep mixed(power_limit_spec({"200", "300"}, 1));
  const auto some = sweep_with_exit_codes(
      mixed, [](const plan::PlannedRun& r) { return r.index == 0 ? 2 : 0; }, clock);
  EXPECT_EQ(some.exit_code(), 0);
  EXPECT_NE(some.summary().find("2 runs (1 failed)"), std::string::npos) << some.summary();
}

}  // namespace
}  // namespace wattwise::experiment
