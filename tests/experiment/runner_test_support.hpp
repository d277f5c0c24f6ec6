#pragma once

#include <signal.h>

#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "experiment/runner.hpp"

namespace wattwise::experiment::testing {

using wattwise::testing::FakeGpu;
using wattwise::testing::FakeGpuSystem;
using wattwise::testing::TempDir;

// A finished run as a job would leave it: `exit_code`, one second, 100 J per GPU.
inline measure::Measurement fake_measurement(hw::GpuSystem& system, const std::vector<std::size_t>& gpus,
                                             int exit_code = 0, std::optional<int> signal = std::nullopt) {
  measure::Measurement m;
  m.job_start = Nanos{0};
  m.job_end = std::chrono::seconds(1);
  m.outcome.exit_code = exit_code;
  m.outcome.signal = signal;
  for (std::size_t index : gpus) {
    m.gpus.push_back(system.gpu(index).identity());
    measure::GpuEnergy e;
    e.gpu = system.gpu(index).identity();
    e.energy_j = 100;
    e.method = sampling::EnergyMethod::kCounter;
    m.gpu_energy.push_back(e);
  }
  return m;
}

inline plan::PlanSpec power_limit_spec(std::vector<std::string> limits, unsigned repeats,
                                       plan::RunOrder order = plan::RunOrder::kAscending) {
  plan::PlanSpec spec;
  spec.knobs.push_back(
      plan::Knob{std::string(plan::kPowerLimitKnob), plan::KnobKind::kHardware, std::move(limits), false});
  spec.repeats = repeats;
  spec.order = order;
  spec.seed = 7;
  return spec;
}

// Two fake GPUs that start at a site's cap of 650 W (not the 700 W default), with a sweep's options around
// them: the database and the state directory in a temporary directory, the settings changed as root
// (safety::LocalSettingsAccess on the fakes' controls, no watchdog).
struct FakeSweep {
  TempDir dir;
  FakeGpuSystem system;
  std::filesystem::path state_dir = dir.path() / "state";  // the journal and the GPU locks
  SweepOptions options;

  explicit FakeSweep(const plan::PlanSpec& spec) {
    system.add(std::make_unique<FakeGpu>(0, "GPU-aaaa", 650));
    system.add(std::make_unique<FakeGpu>(1, "GPU-bbbb", 650));
    options.plan = plan::make_plan(spec);
    options.gpu_indices = {0, 1};
    options.db_path = dir.path() / "sweep.db";
    options.settings_access =
        std::make_shared<safety::LocalSettingsAccess>(system, state_dir, safety::WatchdogLaunch{});
    options.meta.command = "fake job";
  }

  std::vector<std::string> journals() const {
    std::vector<std::string> names;
    if (!std::filesystem::exists(state_dir)) return names;
    for (const auto& e : std::filesystem::directory_iterator(state_dir)) {
      if (e.path().filename().string().rfind("settings-journal", 0) == 0) names.push_back(e.path().string());
    }
    return names;
  }
};

}  // namespace wattwise::experiment::testing
