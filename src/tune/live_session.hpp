#pragma once

// `wattwise tune -- CMD` below the CLI: the job measured as `measure` does (measure::measure_command), the
// live tuner watching it (LiveTuning), and its decisions applied to every job GPU through the same safety
// as `sweep` (safety::SettingsAccess, docs/safety.md): as root GPU locks, the settings guard with its
// journal on disk before the first change, the watchdog that restores if wattwise is killed (SIGKILL
// included); as another user the settings daemon, which restores when this process's connection closes; and
// the restore when the job ends however it ends. A dry run has no settings path and reads the GPUs through
// safety::ReadOnlyGpuSystem, which has no controls: no lock, no journal, no change can happen.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "measure/measurement.hpp"
#include "measure/session.hpp"
#include "safety/restore.hpp"
#include "safety/settings_access.hpp"
#include "tune/live_tuning.hpp"
#include "tune/tuner.hpp"

namespace wattwise::tune {

// The knob's range as asked on the command line; absent ends come from the GPUs.
struct KnobRange {
  std::optional<double> min_value;
  std::optional<double> max_value;
};

// The tuner's range, step and start for the job's GPUs, checked: one setting for all of them, so the range
// is the one every GPU accepts (the largest min, the smallest max). Power limit: the GPUs' constraints, the
// start at the first GPU's current limit. SM clock: the supported clocks at the first GPU's memory clock,
// the start at the highest (an unlocked GPU boosts up to it). usage_error for a range outside the GPUs'.
// `captured_value` is set to the first GPU's value now (what is restored at the end); the tuner's start is
// that value clamped into the range.
TunerConfig tuner_range_for(hw::GpuSystem& system, const std::vector<std::size_t>& job_gpus,
                            TunerConfig config, const KnobRange& range, double& captured_value);

// The value the GPUs are set to for the tuner's `value`: power limits as they are; SM clocks the nearest
// supported one (the candidates are min + k * step, which the GPU may not offer).
double applicable_value(TuneKnob knob, double value, const std::vector<unsigned>& supported_sm_mhz);

struct TuneJobOptions {
  measure::MeasureOptions measure;  // the GPUs (job GPUs first), sampling, time-out
  LiveTuningOptions live;           // tuner config (range filled by tuner_range_for), grace, dry run
  // The path that changes the settings (root or the daemon, as for `sweep`); null in a dry run, and only
  // then.
  std::shared_ptr<const safety::SettingsAccess> settings_access;
};

struct TuneJobOutcome {
  measure::Measurement measurement;
  LiveTuningResult tuning;
  bool changed_settings = false;  // the guard held changes: the restore below ran
  std::string changed_by = "none";  // "root" or "daemon" when settings were held (not in a dry run)
  safety::RestoreReport restore;
};

// Runs the job under the live tuner. The GPUs must be the job's (positions in `system`): every job GPU gets
// the same setting. Restores before returning, and before an exception leaves (then rethrows).
TuneJobOutcome run_tune_job(hw::GpuSystem& system, const std::vector<std::string>& argv,
                            TuneJobOptions options);

}  // namespace wattwise::tune
