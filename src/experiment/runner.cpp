#include "experiment/runner.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/error.hpp"
#include "store/measured_run.hpp"
#include "safety/settings_access.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::experiment {
namespace {

bool changes_hardware(const plan::Plan& plan) {
  return std::any_of(plan.runs.begin(), plan.runs.end(),
                     [](const plan::PlannedRun& r) { return !r.hardware.empty(); });
}

bool is_stop_signal(int signal_number) {
  return signal_number == SIGINT || signal_number == SIGTERM || signal_number == SIGHUP;
}

using workload::StopSignals;

std::string settings_text(const plan::PlannedRun& run) {
  std::string text;
  for (const auto& s : run.settings) text += fmt::format("{}{}={}", text.empty() ? "" : " ", s.knob, s.value);
  if (run.warmup) text += " (warm-up)";
  return text;
}

void check_db_path(const SweepOptions& options) {
  const auto& path = options.db_path;
  if (path.empty()) throw usage_error("no results database given: pass --db FILE");
  if (options.resume) {
    if (!std::filesystem::exists(path))
      throw usage_error(fmt::format("cannot resume {}: it does not exist; drop --resume to start a new sweep",
                                    path.string()));
    if (::access(path.c_str(), W_OK) != 0)
      throw environment_error(fmt::format("cannot resume {}: the file is not writable", path.string()));
    return;
  }
  if (std::filesystem::exists(path))
    throw usage_error(fmt::format("{} exists already: pass --resume to continue that sweep, or another --db",
                                  path.string()));
  const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw environment_error(
        fmt::format("cannot write the results database in {}: {}; pass --db in a writable directory",
                    dir.string(), std::strerror(errno)));
}

// A stop signal that reached wattwise during the run was passed on to the job (or, for a run measured
// elsewhere, to its nodes' agents): the run was cut, whatever the job made of it (a job that checkpoints on
// SIGTERM exits 0). It is not stored, so --resume runs it again, and the sweep stops here. So is a job that
// ended by a stop signal from elsewhere (not our time-out): it was stopped, not failed.
bool cut_by_stop_signal(const measure::Measurement* m, SweepOutcome& outcome) {
  const bool job_stopped =
      m != nullptr && m->outcome.signal && is_stop_signal(*m->outcome.signal) && !m->outcome.timed_out;
  if (!StopSignals::stop_requested() && !job_stopped) return false;
  outcome.end = SweepEnd::kStopSignal;
  outcome.signal = StopSignals::stop_requested() ? StopSignals::signal_number() : *m->outcome.signal;
  return true;
}

// The progress line after a stored run; `m` absent for a run measured elsewhere (its row has the figures).
void report_run(Progress& progress, const store::RunRecord& record, const measure::Measurement* m) {
  progress.run_finished(record.error.empty());
  if (!record.error.empty()) progress.run_failed(record.error);
  if (m)
    progress.last_run_result(m->total_energy_j(),
                             std::chrono::duration<double>(m->job_end - m->job_start).count(),
                             m->backend == "simulated");
  else
    progress.last_run_result(record.energy_j, record.time_s.value_or(0), false);
}

}  // namespace

const safety::SettingsAccess& settings_access_of(const SweepOptions& options) {
  // A read-only sweep has no settings path at all, so nothing below can change a GPU. Whether its plan
  // has hardware knobs is data, not a type: the command refuses those up front, and this is the backstop.
  if (!options.settings_access)
    throw usage_error(
        "this sweep may not change GPU settings (--read-only): drop --power-limit, --sm-clock and "
        "--mem-clock");
  return *options.settings_access;
}

std::vector<store::StoredGpu> stored_gpus_of(hw::GpuSystem& system,
                                             const std::vector<std::size_t>& gpu_indices) {
  std::vector<store::StoredGpu> gpus;
  for (std::size_t index : gpu_indices) {
    hw::GpuReadings& gpu = system.gpu(index);
    store::StoredGpu stored{gpu.identity().index, gpu.identity().uuid, gpu.identity().name, {}, {}, {}};
    if (auto limits = gpu.power_limits()) {
      stored.min_limit_w = limits->min_w;
      stored.max_limit_w = limits->max_w;
      stored.default_limit_w = limits->default_w;
    }
    gpus.push_back(stored);
  }
  return gpus;
}

int SweepOutcome::exit_code() const {
  if (changed_hardware && !restore.all_ok()) return static_cast<int>(ErrorKind::kEnvironment);
  if (end == SweepEnd::kGpuUnanswering) return static_cast<int>(ErrorKind::kEnvironment);
  if (end == SweepEnd::kStopSignal) return 128 + signal;
  if (end == SweepEnd::kTooManyFailures) return 1;
  if (every_run_failed()) return 1;
  return 0;
}

std::string SweepOutcome::summary() const {
  std::string text;
  std::string skipped =
      runs_skipped > 0 ? fmt::format(", {} were already in the database", runs_skipped) : "";
  if (runs_retried > 0) skipped += fmt::format(", {} failed before and ran again", runs_retried);
  switch (end) {
    case SweepEnd::kCompleted:
      if (every_run_failed()) {
        text = fmt::format(
            "sweep ended but every run failed ({} of {}){}: the error column of each run says why; fix the "
            "job and continue with --resume",
            runs_failed, runs_done, skipped);
      } else {
        text = fmt::format("sweep complete: {} runs ({} failed){}", runs_done, runs_failed, skipped);
      }
      break;
    case SweepEnd::kStopSignal:
      text = fmt::format(
          "sweep stopped by signal {} ({}) after {} runs{}: run it again with --resume to continue", signal,
          ::strsignal(signal), runs_done, skipped);
      break;
    case SweepEnd::kGpuUnanswering:
      text = fmt::format(
          "sweep stopped after {} runs: a GPU's driver stopped answering (a call never returned; the run's "
          "error column says which); the other GPUs are restored, the watchdog holds its journal",
          runs_done);
      break;
    case SweepEnd::kTooManyFailures:
      text = fmt::format(
          "sweep stopped early: {} runs failed (--max-failures); the error column of each run "
          "says why; fix the job and continue with --resume",
          runs_failed);
      break;
  }
  if (changed_hardware && !restore.all_ok()) text += "; RESTORING GPU SETTINGS FAILED (see above)";
  return text;
}

bool SweepOutcome::every_run_failed() const {
  return end == SweepEnd::kCompleted && runs_done > 0 && runs_failed == runs_done;
}

void validate_sweep(hw::GpuSystem& system, const SweepOptions& options) {
  if (options.run_elsewhere) {  // the nodes' agents check their own GPUs before they change them
    if (options.plan.runs.empty())
      throw usage_error("the plan has no runs: give knob values or --repeat >= 1");
    check_db_path(options);
    return;
  }
  if (options.gpu_indices.empty()) throw usage_error("no GPU selected: check --gpus");
  for (std::size_t index : options.gpu_indices) {
    if (index >= system.count())
      throw usage_error(fmt::format("no GPU at position {}: there are {}", index, system.count()));
  }
  if (options.plan.runs.empty()) throw usage_error("the plan has no runs: give knob values or --repeat >= 1");
  if (changes_hardware(options.plan))
    settings_access_of(options).validate(system, options.gpu_indices,
                                         plan::hardware_settings_of(options.plan));
  check_db_path(options);
}

std::vector<store::GpuRunEnergy> read_back_settings(hw::GpuSystem& system,
                                                    const std::vector<std::size_t>& gpu_indices) {
  std::vector<store::GpuRunEnergy> read_back;
  for (std::size_t index : gpu_indices) {
    hw::GpuReadings& gpu = system.gpu(index);
    store::GpuRunEnergy g;
    g.gpu_index = gpu.identity().index;
    if (auto limits = gpu.power_limits()) g.enforced_power_limit_w = limits->enforced_w;
    const hw::Telemetry t = gpu.telemetry();
    g.sm_clock_mhz = t.sm_clock_mhz;
    g.mem_clock_mhz = t.mem_clock_mhz;
    read_back.push_back(g);
  }
  return read_back;
}

SweepOutcome run_sweep(hw::GpuSystem& system, const SweepOptions& options, const MeasureRunFn& measure_run,
                       Clock& clock) {
  // First, so that a Ctrl-C during the set-up below is noticed before the first run, not fatal. The CLI
  // may have installed them already (one mechanism for the whole process): then those are used.
  std::optional<StopSignals> own_signals;
  if (!StopSignals::installed()) own_signals.emplace();
  validate_sweep(system, options);
  const plan::Plan& plan = options.plan;
  const auto& gpus = options.gpu_indices;
  SweepOutcome outcome;
  outcome.changed_hardware = changes_hardware(plan) && !options.run_elsewhere;

  // Held before the store is opened (a GPU another wattwise holds leaves no database behind) and before
  // the idle baseline is read: locks, journal and watchdog as root, the daemon's connection otherwise.
  std::unique_ptr<safety::HeldSettings> held;
  if (outcome.changed_hardware) {
    const safety::SettingsAccess& access = settings_access_of(options);
    held = access.hold(system, gpus, plan::hardware_settings_of(plan));
    outcome.settings_changed_by = std::string(access.name());
  }
  const nlohmann::json plan_json =
      options.plan_json.is_null() ? plan::plan_spec_to_json(plan.spec) : options.plan_json;
  const std::vector<store::StoredGpu> stored_gpus =
      options.stored_gpus.empty() ? stored_gpus_of(system, gpus) : options.stored_gpus;
  store::ResultsStore store =
      options.resume ? store::ResultsStore::open_for_resume(options.db_path, plan_json)
                     : store::ResultsStore::create(options.db_path, options.meta, plan_json, stored_gpus);
  if (options.resume) {
    store.check_same_job(options.meta, stored_gpus, options.allow_mixed_results);
    store.record_sweep_options(options.meta.sweep_options);
  }
  if (!options.run_elsewhere) store.record_settings_changed_by(outcome.settings_changed_by);
  // Failed runs are run again on resume ("fix the job and continue with --resume"); successful ones not.
  const std::vector<plan::PlannedRun> remaining = plan::runs_not_done(plan, store.succeeded_plan_indices());
  outcome.runs_skipped = plan.runs.size() - remaining.size();
  const std::set<std::size_t> stored_before = store.completed_plan_indices();
  for (const auto& run : remaining) outcome.runs_retried += stored_before.contains(run.index) ? 1 : 0;
  // Idle power before the first change and the first job: the level a cool-down waits for.
  const IdleBaseline idle = options.cooldown ? read_idle_baseline(system, gpus) : IdleBaseline{};

  Progress* progress = options.progress;
  if (progress) progress->begin(options.progress_total.of(plan.runs.size()), outcome.runs_skipped);
  std::size_t k = 0;  // into remaining, for a plan run in order
  const auto next_run = [&]() -> std::optional<plan::PlannedRun> {
    if (options.next_run) return options.next_run(store);
    if (k < remaining.size()) return remaining[k++];
    return std::nullopt;
  };
  std::set<std::string> unanswering;  // UUIDs of GPUs whose driver stopped answering during a run
  // Whether a run may follow (an adaptive sweep only knows when it is asked).
  const auto more_after = [&] { return options.next_run ? true : k < remaining.size(); };
  try {
    while (const std::optional<plan::PlannedRun> next = next_run()) {
      const plan::PlannedRun& run = *next;
      if (StopSignals::stop_requested()) {
        outcome.end = SweepEnd::kStopSignal;
        outcome.signal = StopSignals::signal_number();
        break;
      }
      if (progress) progress->run_started(settings_text(run));
      const std::string started_at = utc_now_iso8601();
      std::optional<measure::Measurement> m;  // absent: the run was measured elsewhere
      store::RunRecord record;
      if (options.run_elsewhere) {
        record = options.run_elsewhere(run);
        if (cut_by_stop_signal(nullptr, outcome)) break;
      } else {
        if (held) held->apply(run.hardware);
        const std::vector<store::GpuRunEnergy> read_back = read_back_settings(system, gpus);
        m = measure_run(run);
        const std::string ended_at = utc_now_iso8601();

        if (cut_by_stop_signal(&*m, outcome)) break;
        record = store::record_of(run, *m, read_back, started_at, ended_at);
        // The trace files and the traces first, then the run with them in one transaction: a full disk
        // leaves the run out (so --resume runs it again), never a run without its trace.
        if (options.keep_extras) options.keep_extras(run, *m, record);
      }
      store.add_run(record);
      ++outcome.runs_done;
      if (!record.error.empty()) ++outcome.runs_failed;
      if (progress) report_run(*progress, record, m ? &*m : nullptr);
      // A GPU whose driver call never returned would block the next run's settings, read-back and
      // cool-down (and this process with them): the sweep ends here, the others are restored below.
      if (m) unanswering = m->unanswering_gpus();
      if (!unanswering.empty()) {
        outcome.end = SweepEnd::kGpuUnanswering;
        break;
      }
      if (options.max_failures > 0 && outcome.runs_failed >= options.max_failures && more_after()) {
        outcome.end = SweepEnd::kTooManyFailures;
        break;
      }
      if (options.cooldown && more_after())
        cool_down(system, gpus, idle, clock, *options.cooldown, [] { return StopSignals::stop_requested(); });
    }
  } catch (...) {
    // Restore before the exception leaves: the caller prints the error, the GPUs are already back.
    if (progress) progress->end();
    if (held) {
      const safety::RestoreReport report = held->restore();
      if (!report.all_ok())
        std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", report.summary().c_str());
    }
    throw;
  }
  if (progress) progress->end();
  // The GPUs left unrestored for want of an answer stay in the journal: the watchdog restores them in its
  // own process, should their driver answer again, and holds their locks meanwhile.
  if (held) outcome.restore = held->restore(unanswering);
  return outcome;
}

}  // namespace wattwise::experiment
