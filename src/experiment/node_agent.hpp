#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"
#include "measure/measurement.hpp"
#include "measure/session.hpp"
#include "plan/plan.hpp"
#include "safety/restore.hpp"
#include "safety/settings_access.hpp"
#include "store/results_store.hpp"

// The per-node agent of a multi-node sweep (`sweep --slurm`, docs/slurm.md): under srun, each node's
// `wattwise measure --power-limit W --out-dir DIR -- CMD` sets its own job GPUs to the run's setting with
// the sweep's safety (lock, journal, watchdog: safety::GuardedGpus as root; the settings daemon otherwise),
// measures the node's part of the job,
// and restores before it writes its result. No node depends on another to be put back.
namespace wattwise::experiment {

struct AgentOptions {
  plan::HardwareSettings settings;  // empty: nothing is changed (a plain measurement)
  // The path that changes the settings (root or the daemon); needed when `settings` is not empty.
  std::shared_ptr<const safety::SettingsAccess> settings_access;
};

struct AgentOutcome {
  measure::Measurement measurement;
  std::vector<store::GpuRunEnergy> read_back;  // what each job GPU enforced once set (read_back_settings)
  bool changed_settings = false;               // the restore below ran
  std::string changed_by = "none";             // "root" or "daemon" when settings were changed
  safety::RestoreReport restore;
};

// Checks the settings against every job GPU (range, permission) before anything is locked or changed, then
// holds the GPUs, applies, reads back, runs the job as `measure` does and restores: on return, and before
// an exception leaves (then rethrows). `options.settings` empty: measure_command alone.
AgentOutcome measure_under_settings(hw::GpuSystem& system, const std::vector<std::string>& argv,
                                    const measure::MeasureOptions& measure_options,
                                    const AgentOptions& options);

// The `settings` object of the agent's JSON result (docs/slurm.md): what was asked, what each GPU
// enforced (by UUID), and whether every GPU was put back. Null when nothing was asked.
nlohmann::json settings_json(const plan::HardwareSettings& asked, const AgentOutcome& outcome,
                             hw::GpuSystem& system, const std::vector<std::size_t>& job_gpus);

// The job GPUs of a measurement: the first job_gpu_count of gpu_positions (all when unset).
std::vector<std::size_t> job_gpu_positions(const measure::MeasureOptions& options, std::size_t gpu_count);

}  // namespace wattwise::experiment
