#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "experiment/cooldown.hpp"
#include "experiment/progress.hpp"
#include "hw/gpu.hpp"
#include "measure/measurement.hpp"
#include "plan/plan.hpp"
#include "safety/restore.hpp"
#include "safety/settings_access.hpp"
#include "store/results_store.hpp"

namespace wattwise::experiment {

// Measures one planned run's job (a real command or a simulated job) with the run's knob values. The GPU
// settings are already applied when it is called.
using MeasureRunFn = std::function<measure::Measurement(const plan::PlannedRun& run)>;

// Called before a run is stored, to keep extras with it: writes the trace files (complete, or throws an
// environment error such as "disk full writing ...") and adds the traces to `record`, which is then stored
// in one transaction. A failure leaves the run out of the database, so --resume runs it again.
using RunExtrasFn =
    std::function<void(const plan::PlannedRun& run, const measure::Measurement& m, store::RunRecord& record)>;

struct SweepOptions {
  plan::Plan plan;
  std::vector<std::size_t> gpu_indices;  // positions in the GpuSystem, all checked and changed together
  std::filesystem::path db_path;
  store::StoreMeta meta;
  nlohmann::json plan_json;  // stored with the results and compared on resume; empty: plan_spec_to_json
  std::vector<store::StoredGpu> stored_gpus;  // empty: read from the system
  bool resume = false;
  // Resume even when the job's command or the GPUs differ from the stored ones (recorded in the database).
  bool allow_mixed_results = false;
  // Stop the sweep after this many failed runs (exit status != 0, time-out); 0: never stop for failures.
  unsigned max_failures = 3;
  std::optional<CooldownOptions> cooldown;
  // The path that changes the GPUs' settings (cli/settings_path.hpp chooses: root, made from the GPUs'
  // controls, or the daemon). Null: nothing may change them (`--read-only`), and a plan with hardware knobs
  // is refused.
  std::shared_ptr<const safety::SettingsAccess> settings_access;
  RunExtrasFn keep_extras;
  Progress* progress = nullptr;
  // An adaptive sweep: asked before each run for the next one, given the store with every run so far;
  // nullopt ends the sweep. Unset: the plan's runs not yet done, in plan order.
  std::function<std::optional<plan::PlannedRun>(const store::ResultsStore&)> next_run;
  ProgressTotal progress_total;  // the plan's runs unless an adaptive sweep says otherwise
  // Runs measured and set elsewhere (`sweep --slurm`: each node's agent holds its own GPUs, experiment/
  // multi_node_run.hpp): the runner locks, journals and changes nothing here, calls this instead of
  // measure_run, and stores the row it returns.
  std::function<store::RunRecord(const plan::PlannedRun&)> run_elsewhere;
};

enum class SweepEnd {
  kCompleted,        // every planned run is in the database
  kStopSignal,       // SIGINT/SIGTERM/SIGHUP to wattwise, or the job ended by one of them
  kTooManyFailures,  // --max-failures reached
  kGpuUnanswering,   // a GPU's driver stopped answering during a run (a call never returned)
};

struct SweepOutcome {
  SweepEnd end = SweepEnd::kCompleted;
  int signal = 0;                 // the stop signal, for kStopSignal
  std::size_t runs_skipped = 0;   // already in the database and succeeded (resume)
  std::size_t runs_retried = 0;   // failed before and run again (resume)
  std::size_t runs_done = 0;      // run and stored by this invocation, failed ones included
  std::size_t runs_failed = 0;    // of runs_done
  bool changed_hardware = false;  // the sweep had hardware knobs: restore ran
  // Which path changed them, as the database's meta `settings_changed_by` records it: "root", "daemon",
  // or "none" (nothing changed here: read-only knobs, or `sweep --slurm`, whose agents record their own).
  std::string settings_changed_by = "none";
  safety::RestoreReport restore;

  // 0: all runs ran (some may have failed) and the GPUs are restored; 128+N after stop signal N; 1 after
  // --max-failures or when every run of this invocation failed; 3 (environment) when a restore failed.
  int exit_code() const;
  // One line saying how the sweep ended and why.
  std::string summary() const;
  // The sweep ran to its end and not one run of this invocation succeeded.
  bool every_run_failed() const;
};

// Checks that can fail before anything is touched: hardware settings against each GPU (range, permission),
// the database path (a new file in a writable directory, or an existing one for --resume).
void validate_sweep(hw::GpuSystem& system, const SweepOptions& options);

// Runs the plan in the order of docs/safety.md: validate, hold the GPUs (as root safety::GuardedGpus:
// lock, capture and journal their settings, start the watchdog; otherwise through the daemon), then for
// each run not yet in the database: apply the settings, read back what the GPU enforces, measure, store the
// run at once, cool down. Restores at the end, on a stop signal, after --max-failures and when an exception
// unwinds (then it rethrows after restoring). `clock` is the time line of cool-downs (a VirtualClock for
// simulated GPUs).
SweepOutcome run_sweep(hw::GpuSystem& system, const SweepOptions& options, const MeasureRunFn& measure_run,
                       Clock& clock);

// The sweep's settings path, options.settings_access; usage_error when there is none (a read-only sweep).
const safety::SettingsAccess& settings_access_of(const SweepOptions& options);

// The readings of every GPU right after its settings were applied: what the GPU enforces, which may differ
// from what was asked (other caps, clocks the GPU rounds).
std::vector<store::GpuRunEnergy> read_back_settings(hw::GpuSystem& system,
                                                    const std::vector<std::size_t>& gpu_indices);

// The database's description of the GPUs at these positions: identity and power-limit constraints.
std::vector<store::StoredGpu> stored_gpus_of(hw::GpuSystem& system,
                                             const std::vector<std::size_t>& gpu_indices);

}  // namespace wattwise::experiment
