#include "tune/live_session.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/private_dir.hpp"
#include "measure/job_watchers.hpp"
#include "measure/session.hpp"
#include "plan/plan.hpp"
#include "safety/settings_access.hpp"
#include "safety/settings_guard.hpp"

namespace wattwise::tune {
namespace {

// The environment variable that names the tuning state file for the job (python: wattwise.tuning_state()).
constexpr const char* kStateVariable = "WATTWISE_TUNING_STATE";
// SM clocks: the H100 offers them ~15 MHz apart; the tuner's candidates are this far apart unless the
// GPU's own spacing is wider.
constexpr double kSmClockStepMhz = 15;

std::vector<unsigned> supported_sm_clocks(hw::GpuReadings& gpu) {
  const auto mem = gpu.supported_mem_clocks_mhz();
  if (mem.empty()) return {};
  std::vector<unsigned> sm = gpu.supported_sm_clocks_mhz(*std::max_element(mem.begin(), mem.end()));
  std::sort(sm.begin(), sm.end());
  return sm;
}

std::string gpu_name(hw::GpuReadings& gpu) {
  return fmt::format("GPU {} ({})", gpu.identity().index, gpu.identity().uuid);
}

plan::HardwareSettings settings_for(TuneKnob knob, double value) {
  plan::HardwareSettings s;
  if (knob == TuneKnob::kPowerLimit)
    s.power_limit_w = value;
  else
    s.sm_clock_mhz = static_cast<unsigned>(std::lround(value));
  return s;
}

}  // namespace

TunerConfig tuner_range_for(hw::GpuSystem& system, const std::vector<std::size_t>& job_gpus,
                            TunerConfig config, const KnobRange& range, double& captured_value) {
  if (job_gpus.empty()) throw usage_error("no GPU to tune: check --gpus");
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  for (std::size_t position : job_gpus) {
    hw::GpuReadings& gpu = system.gpu(position);
    if (config.knob == TuneKnob::kPowerLimit) {
      const auto limits = gpu.power_limits();
      if (!limits)
        throw environment_error(
            fmt::format("{} does not report its power limits, so they cannot be tuned: "
                        "try --knob sm-clock",
                        gpu_name(gpu)));
      low = std::max(low, limits->min_w);
      high = std::min(high, limits->max_w);
      if (position == job_gpus.front()) config.start_value = limits->current_w;
    } else {
      const auto sm = supported_sm_clocks(gpu);
      if (sm.empty())
        throw environment_error(
            fmt::format("{} lists no supported SM clocks, so they cannot be tuned: try "
                        "--knob power-limit",
                        gpu_name(gpu)));
      low = std::max(low, static_cast<double>(sm.front()));
      high = std::min(high, static_cast<double>(sm.back()));
      if (position == job_gpus.front()) {
        config.start_value = sm.back();
        // The clocks' mean spacing is the knob's resolution, as the simulated tuning takes it: candidates
        // closer than that lock the same clock under two names, and the search spends probes on it.
        if (sm.size() > 1)
          config.step = std::max(config.step, (sm.back() - sm.front()) / static_cast<double>(sm.size() - 1));
      }
    }
  }
  const char* unit = config.knob == TuneKnob::kPowerLimit ? "W" : "MHz";
  if (low > high)
    throw usage_error(fmt::format("the job's GPUs accept no common {} range: tune them apart (--gpus)",
                                  config.knob == TuneKnob::kPowerLimit ? "power limit" : "SM clock"));
  const double min_value = range.min_value.value_or(low);
  const double max_value = range.max_value.value_or(high);
  // A range of one value is a setting to hold, as the tuner takes it (TunerConfig: min <= max).
  if (min_value > max_value)
    throw usage_error(fmt::format("--range {}:{} {} is inverted: give MIN:MAX with MIN <= MAX", min_value,
                                  max_value, unit));
  if (min_value < low || max_value > high)
    throw usage_error(fmt::format("--range {}:{} {} is outside what the job's GPUs accept ({}:{} {}): give "
                                  "MIN:MAX within it",
                                  min_value, max_value, unit, low, high, unit));
  config.min_value = min_value;
  config.max_value = max_value;
  captured_value = config.start_value;
  config.start_value = std::clamp(config.start_value, min_value, max_value);
  if (config.knob == TuneKnob::kSmClock) config.step = std::max(config.step, kSmClockStepMhz);
  return config;
}

double applicable_value(TuneKnob knob, double value, const std::vector<unsigned>& supported_sm_mhz) {
  if (knob == TuneKnob::kPowerLimit || supported_sm_mhz.empty()) return value;
  unsigned best = supported_sm_mhz.front();
  for (unsigned mhz : supported_sm_mhz)
    if (std::fabs(mhz - value) < std::fabs(best - value)) best = mhz;
  return best;
}

TuneJobOutcome run_tune_job(hw::GpuSystem& system, const std::vector<std::string>& argv,
                            TuneJobOptions options) {
  const auto& positions = options.measure.gpu_positions;
  const std::size_t job_count = options.measure.job_gpu_count.value_or(positions.size());
  const std::vector<std::size_t> job_gpus(positions.begin(),
                                          positions.begin() + static_cast<long>(job_count));
  const TuneKnob knob = options.live.tuner.knob;
  const bool dry_run = options.live.dry_run;

  // Before anything is locked or changed: every value the search may try is accepted by every job GPU,
  // and the driver (as root) lets us change it (the same check as sweep's).
  const std::shared_ptr<const safety::SettingsAccess> access = options.settings_access;
  if (!dry_run && !access) throw std::logic_error("run_tune_job: no settings path outside a dry run");
  const std::vector<plan::HardwareSettings> extremes{settings_for(knob, options.live.tuner.min_value),
                                                     settings_for(knob, options.live.tuner.max_value)};
  if (!dry_run) access->validate(system, job_gpus, extremes);
  const PrivateDir state("wattwise-tune", "the tuning state's directory");  // only this user can enter it
  options.live.state_file = state.path() / "tuning.json";
  options.measure.extra_environment[kStateVariable] = options.live.state_file.string();

  std::unique_ptr<safety::HeldSettings> guarded;
  if (!dry_run) {
    guarded = access->hold(system, job_gpus, extremes);
    const std::vector<unsigned> sm = knob == TuneKnob::kSmClock
                                         ? supported_sm_clocks(system.gpu(job_gpus.front()))
                                         : std::vector<unsigned>{};
    options.live.apply = [&guarded, knob, sm](double value) {
      guarded->apply(settings_for(knob, applicable_value(knob, value, sm)));
    };
  }

  TuneJobOutcome outcome;
  LiveTuning live(options.live);
  // The caller's own watcher (the server of in-process readings) runs beside the tuner.
  options.measure.while_job_runs =
      measure::watch_together({std::move(options.measure.while_job_runs),
                               measure::named_watcher("the tuner", [&live](const measure::LiveJob& job,
                                                                           const std::atomic<bool>& ended) {
                                 live.watch(job, ended);
                               })});
  try {
    outcome.measurement = measure::measure_command(system, argv, options.measure);
  } catch (...) {
    // Restore before the exception leaves: the caller prints the error, the GPUs are already back.
    if (guarded) {
      const safety::RestoreReport report = guarded->restore();
      if (!report.all_ok())
        std::cerr << "wattwise: restoring GPU settings failed:\n" << report.summary() << std::flush;
    }
    throw;
  }
  outcome.tuning = live.result();
  if (guarded) {
    outcome.changed_settings = true;
    outcome.changed_by = std::string(access->name());
    // A GPU whose driver stopped answering is left to the watchdog with its journal; the others go back.
    outcome.restore = guarded->restore(outcome.measurement.unanswering_gpus());
  }
  return outcome;
}

}  // namespace wattwise::tune
