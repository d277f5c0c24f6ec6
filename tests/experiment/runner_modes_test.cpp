#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "experiment/cooldown.hpp"
#include "experiment/progress.hpp"
#include "measure/simulated_session.hpp"
#include "runner_test_support.hpp"
#include "safety/dry_run.hpp"
#include "safety/guarded_gpus.hpp"
#include "safety/read_only_gpu.hpp"
#include "safety/restore.hpp"
#include "safety/settings_guard.hpp"
#include "sim/simulation.hpp"

namespace wattwise::experiment {
namespace {

using testing::FakeSweep;
using testing::power_limit_spec;

// A FILE* writing to memory, for what a Progress prints.
class MemoryFile {
 public:
  MemoryFile() : file_(open_memstream(&buffer_, &size_)) {}
  ~MemoryFile() {
    close();
    std::free(buffer_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::FILE* get() const { return file_; }
  // Everything written; closes the file.
  std::string text() {
    close();
    return std::string(buffer_, size_);
  }

 private:
  void close() {
    if (file_ != nullptr) std::fclose(std::exchange(file_, nullptr));
  }
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

TEST(RunnerDryRun, ListsEveryRunAndEveryChangeAndTouchesNothing) {
  FakeSweep sweep(power_limit_spec({"300", "200"}, 2));
  const std::string text = safety::describe_dry_run(sweep.system, {0, 1}, sweep.options.plan);
  EXPECT_NE(text.find("4 runs"), std::string::npos) << text;
  EXPECT_NE(text.find("run    3  repeat 1  power_limit_w=300"), std::string::npos) << text;
  EXPECT_NE(text.find("before run 0: power limit 650 W -> 200 W"), std::string::npos) << text;
  EXPECT_NE(text.find("restore: power limit 300 W -> 650 W"), std::string::npos) << text;
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
  EXPECT_TRUE(sweep.system.fake(1).calls.empty());
  EXPECT_FALSE(std::filesystem::exists(sweep.state_dir));
  EXPECT_FALSE(std::filesystem::exists(sweep.options.db_path));
}

// A read-only view has no controls by type: it is no ControllableGpuSystem, its GPUs are readings only, and
// nothing that changes a setting (a settings guard, the GPUs held as root, a restore) can be made from it.
// On the old code, where the view's controls threw at run time, these do not compile.
static_assert(!std::is_convertible_v<safety::ReadOnlyGpuSystem&, hw::ControllableGpuSystem&>);
static_assert(std::is_same_v<decltype(std::declval<safety::ReadOnlyGpuSystem&>().gpu(0)), hw::GpuReadings&>);
static_assert(!std::is_constructible_v<safety::LocalSettingsAccess, safety::ReadOnlyGpuSystem&,
                                       std::filesystem::path, safety::WatchdogLaunch>);
static_assert(!std::is_constructible_v<safety::SettingsGuard, safety::ReadOnlyGpuSystem&,
                                       std::vector<std::size_t>, std::filesystem::path>);
static_assert(
    !std::is_constructible_v<safety::GuardedGpus, safety::ReadOnlyGpuSystem&, const std::vector<std::size_t>&,
                             const std::filesystem::path&, const safety::WatchdogLaunch&>);
static_assert(!std::is_invocable_v<decltype(&safety::restore_gpus), safety::ReadOnlyGpuSystem&,
                                   const safety::Journal&, const std::set<std::string>&>);

TEST(RunnerReadOnly, ReadingsPassThroughAndNothingIsSettable) {
  testing::FakeGpuSystem inner;
  inner.add(std::make_unique<testing::FakeGpu>(0, "GPU-aaaa", 650));
  safety::ReadOnlyGpuSystem system(inner);
  hw::GpuReadings& gpu = system.gpu(0);
  EXPECT_EQ(gpu.power_limits()->current_w, 650);
  EXPECT_FALSE(gpu.capabilities().power_limit_set);
  EXPECT_THROW(safety::validate_hardware_settings(system, {0}, {plan::HardwareSettings{300.0}}), Error);
  EXPECT_TRUE(inner.fake(0).calls.empty());
}

// A sweep with no settings path (what `--read-only` gives the runner) refuses a plan that would change a
// setting before it locks, journals, creates the database or calls a control.
TEST(RunnerReadOnly, ASweepWithoutASettingsPathRefusesHardwareKnobsAndTouchesNothing) {
  FakeSweep sweep(power_limit_spec({"300"}, 1));
  sweep.options.settings_access = nullptr;
  MonotonicClock clock;
  try {
    run_sweep(
        sweep.system, sweep.options,
        [&](const plan::PlannedRun&) {
          return testing::fake_measurement(sweep.system, {0, 1});
        },
        clock);
    FAIL() << "the sweep ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--read-only"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
  EXPECT_TRUE(sweep.system.fake(1).calls.empty());
  EXPECT_FALSE(std::filesystem::exists(sweep.state_dir));
  EXPECT_FALSE(std::filesystem::exists(sweep.options.db_path));
}

// The local path changes only the GPUs it was made from: handed another system's readings, it holds nothing.
TEST(RunnerReadOnly, TheLocalPathRefusesToHoldAnotherSystemsGpus) {
  FakeSweep sweep(power_limit_spec({"300"}, 1));
  testing::FakeGpuSystem other;
  other.add(std::make_unique<testing::FakeGpu>(0, "GPU-cccc", 650));
  safety::ReadOnlyGpuSystem view(sweep.system);
  EXPECT_THROW(sweep.options.settings_access->hold(view, {0}, {plan::HardwareSettings{300.0}}),
               std::logic_error);
  EXPECT_THROW(sweep.options.settings_access->hold(other, {0}, {plan::HardwareSettings{300.0}}),
               std::logic_error);
  EXPECT_FALSE(std::filesystem::exists(sweep.state_dir));
  EXPECT_TRUE(sweep.system.fake(0).calls.empty());
}

TEST(RunnerProgress, PlainLinesWithEtaFromTheMeanRunTime) {
  MemoryFile out;
  Progress progress(out.get(), false);
  progress.begin(10, 2);
  progress.run_started("power_limit_w=200");
  progress.run_finished(30.0, true);
  progress.run_started("power_limit_w=250");
  EXPECT_EQ(progress.line(), "run 4/10 power_limit_w=250 | ETA 3m30s");
  progress.run_finished(10.0, false);
  progress.run_started("power_limit_w=300");
  EXPECT_EQ(progress.line(), "run 5/10 power_limit_w=300 | 1 failed | ETA 2m00s");
  progress.end();
  const std::string text = out.text();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("resuming: 2 of 10"), std::string::npos) << text;
  EXPECT_NE(text.find("wattwise: run 3/10 power_limit_w=200\n"), std::string::npos) << text;
}

// An adaptive sweep's run budget counts successful runs; the line counts every run, so with failures more
// runs are made than its total. The ETA is then this run's, not a count wrapped round below zero.
TEST(RunnerProgress, MoreRunsThanTheTotalGiveTheEtaOfOne) {
  MemoryFile out;
  Progress progress(out.get(), false);
  progress.begin(2, 0);
  for (int i = 0; i < 3; ++i) {
    progress.run_started("power_limit_w=200");
    progress.run_finished(30.0, i != 0);
  }
  progress.run_started("power_limit_w=250");
  EXPECT_EQ(progress.line(), "run 2/2 power_limit_w=250 | 1 failed | ETA 30s");
  progress.end();
}

// Issue 22, item 11: "run 2/3 power_limit_w=250 | last 54.27 kJ" read as 250 W's energy; it was 200 W's.
TEST(RunnerProgress, TheLastRunsEnergyAndTimeAreNamedByTheirOwnSetting) {
  Progress progress(stderr, false);
  progress.begin(3, 0);
  progress.run_started("power_limit_w=200");
  progress.run_finished(12.0, true);
  progress.last_run_result(54270.0, 294.98, false);
  progress.run_started("power_limit_w=250");
  EXPECT_EQ(progress.line(),
            "run 2/3 power_limit_w=250 | last: power_limit_w=200 used 54.27 kJ in 294.98 s | ETA 24s");
}

TEST(RunnerProgress, SimulatedRunsSayTheirTimeIsSimulatedAndGiveNoEta) {
  Progress progress(stderr, false);
  progress.begin(3, 0);
  progress.run_started("power_limit_w=200");
  progress.run_finished(0.01, true);
  progress.last_run_result(48110.0, 349.37, true);
  progress.run_started("power_limit_w=250");
  EXPECT_EQ(
      progress.line(),
      "run 2/3 power_limit_w=250 | last: power_limit_w=200 used 48.11 kJ in 349.37 s of simulated time");
}

TEST(RunnerProgress, TerminalLineIsRewrittenInPlace) {
  MemoryFile out;
  Progress progress(out.get(), true);
  progress.begin(2, 0);
  progress.run_started("a");
  progress.run_finished(1.0, true);
  progress.run_started("b");
  progress.end();
  EXPECT_EQ(out.text(), "\rrun 1/2 a\033[K\rrun 2/2 b | ETA 1s\033[K\n");
}

TEST(RunnerProgress, AStageShowsAfterTheSettingUntilChanged) {
  std::FILE* out = std::fopen("/dev/null", "w");
  Progress progress(out, false);
  progress.begin(53, 0);
  progress.set_stage("refining: refining EDP; 8 runs used, 45 left");
  progress.run_started("power_limit_w=195");
  EXPECT_EQ(progress.line(), "run 1/53 power_limit_w=195 | refining: refining EDP; 8 runs used, 45 left");
  progress.set_stage("");
  EXPECT_EQ(progress.line(), "run 1/53 power_limit_w=195");
  progress.end();
  std::fclose(out);
}

// The whole path on the simulated V100: SimGpu limits, measure_simulated, the store, the restore.
TEST(RunnerSimulated, SweepOnTheSimulatedGpuReadsBackEachLimitAndCoolsDownOnVirtualTime) {
  sim::SimulationOptions sim_options;
  sim_options.samples_per_epoch = 20000;
  sim_options.iteration_markers_per_epoch = 4;
  auto simulation = sim::make_simulation("v100:resnet50", sim_options);
  const double original_w = simulation.system->gpu(0).power_limits()->current_w;
  testing::TempDir dir;
  SweepOptions options;
  options.plan = plan::make_plan(power_limit_spec({"150", "250"}, 2));
  options.gpu_indices = {0};
  options.db_path = dir.path() / "sim.db";
  options.settings_access = std::make_shared<safety::LocalSettingsAccess>(
      *simulation.system, dir.path() / "state", safety::WatchdogLaunch{});
  options.cooldown = CooldownOptions{};
  std::uint64_t seed = 0;
  auto outcome = run_sweep(
      *simulation.system, options,
      [&](const plan::PlannedRun&) {
        simulation.job = simulation.new_job(++seed);
        return measure::measure_simulated(simulation, {});
      },
      *simulation.clock);
  EXPECT_EQ(outcome.exit_code(), 0);
  const auto runs = store::ResultsStore::open_read_only(options.db_path).runs();
  ASSERT_EQ(runs.size(), 4u);
  for (const auto& run : runs) {
    EXPECT_EQ(run.gpus.at(0).enforced_power_limit_w, std::stod(run.settings.at(0).value));
    ASSERT_TRUE(run.energy_j.has_value());
    EXPECT_GT(*run.energy_j, 0);
  }
  // A lower limit costs less energy per run (the V100 data: 150 W saves about a third).
  EXPECT_LT(*runs[0].energy_j, *runs[1].energy_j);
  EXPECT_EQ(simulation.system->gpu(0).power_limits()->current_w, original_w);
}

}  // namespace
}  // namespace wattwise::experiment
