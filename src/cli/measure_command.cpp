#include <cstdio>
#include <cstring>

#include <unistd.h>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/command_gpus.hpp"
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/job_flags.hpp"
#include "cli/output_file.hpp"
#include "cli/settings_path.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "experiment/node_agent.hpp"
#include "measure/job_watchers.hpp"
#include "measure/live_status.hpp"
#include "measure/session.hpp"
#include "measure/simulated_session.hpp"
#include "plan/knob.hpp"
#include "report/measure_report.hpp"
#include "report/trace_csv.hpp"
#include "sampling/sampler_config.hpp"
#include "slurm/result_dir.hpp"
#include "slurm/slurm_task.hpp"
#include "window/window_server.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::cli {

namespace {

const JobCommand kMeasureJob{"measure", "`wattwise measure -- CMD ARGS`"};

struct MeasureFlags : JobFlags {
  std::optional<std::string> gpus;  // absent: CUDA_VISIBLE_DEVICES if set, else all
  std::string other_gpus = "omit";
  // Durations are text, read by parse_duration (one parser for every duration flag).
  std::string interval_ms = "20";
  std::optional<std::string> counter_interval_ms;  // absent: the default
  std::optional<std::string> pcie_interval_ms;     // absent: PCIe throughput is not read
  std::optional<std::string> counter_postings;     // absent: sampling::kDefaultPostingsPerRead
  std::string trace;
  std::string json;
  bool no_status = false;                // no live status line on a terminal
  bool no_daemon = false;                // --power-limit etc. never through the settings daemon
  std::string output;                    // the summary for people; default stderr
  std::string out_dir;                   // under SLURM: this task's result, named by job, step, node and task
  std::optional<std::string> timeout_s;  // absent: no time-out
  std::optional<std::string> job_gpus;   // absent: every measured GPU
  // The per-node agent of `sweep --slurm`: the job GPUs held at these settings while the job runs, then
  // restored (experiment/node_agent.hpp). Absent: nothing is changed.
  std::optional<std::string> power_limit, sm_clock, mem_clock;
};

std::string phases_path(const std::string& trace) {
  std::filesystem::path p(trace);
  return (p.parent_path() / (p.stem().string() + ".phases.csv")).string();
}

// The periods and time-out from the duration flags; bad values are usage errors before anything starts.
measure::MeasureOptions measure_options(const MeasureFlags& flags) {
  measure::MeasureOptions options;
  options.sampler.fast_period = parse_duration("--interval", flags.interval_ms, DurationUnit::kMilliseconds,
                                               kMinIntervalMs, kMaxIntervalMs);
  if (flags.counter_interval_ms)
    options.sampler.counter_period =
        parse_duration("--counter-interval", *flags.counter_interval_ms, DurationUnit::kMilliseconds,
                       kMinIntervalMs, kMaxIntervalMs);
  if (flags.counter_postings)
    options.sampler.postings_per_read = static_cast<unsigned>(
        parse_count("--counter-postings", *flags.counter_postings, 1, sampling::kMaxPostingsPerRead));
  if (flags.pcie_interval_ms)
    options.sampler.pcie_period =
        parse_duration("--pcie-interval", *flags.pcie_interval_ms, DurationUnit::kMilliseconds,
                       kMinPcieIntervalMs, kMaxPcieIntervalMs);
  if (flags.timeout_s)
    options.timeout =
        parse_duration("--timeout", *flags.timeout_s, DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS);
  options.node = node_options(flags.node);
  return options;
}

// Once the GPUs are known: --job-gpus within them, and the sampling periods the sampler would refuse later.
void check_gpu_counts(const MeasureFlags& flags, measure::MeasureOptions& options) {
  const std::size_t measured = options.gpu_positions.size();
  if (flags.job_gpus) {
    options.job_gpu_count = parse_count("--job-gpus", *flags.job_gpus, 1, measured);
    options.job_gpu_source = "--job-gpus";
  }
  sampling::resolve_periods(options.sampler, measured);
}

// The GPUs to sample and which are the job's (measure/job_gpus.hpp); warnings go to stderr at once.
void choose_gpus(hw::GpuSystem& system, const MeasureFlags& flags, measure::MeasureOptions& options) {
  const auto selection = measure::select_job_gpus(
      system, job_gpu_request(system, flags.gpus, flags.other_gpus, !flags.simulate.empty()));
  for (const auto& warning : selection.warnings) std::cerr << "wattwise: " << warning << "\n";
  options.gpu_positions = selection.positions;
  options.via_mig = selection.via_mig;
  options.job_gpu_source = selection.source;
  if (selection.job_gpu_count < selection.positions.size()) options.job_gpu_count = selection.job_gpu_count;
  check_gpu_counts(flags, options);
}

// --power-limit W, --sm-clock MHz, --mem-clock MHz: one value each, parsed by the sweep's knob parsers.
plan::HardwareSettings hardware_settings(const MeasureFlags& flags) {
  const auto one_value = [](const plan::Knob& knob, const char* flag) {
    if (knob.from_supported_clocks || knob.values.size() != 1)
      throw usage_error(fmt::format("measure {} takes one value (a sweep takes a list)", flag));
    return plan::knob_number(knob.name, knob.values.front());
  };
  plan::HardwareSettings settings;
  if (flags.power_limit)
    settings.power_limit_w = one_value(plan::parse_power_limit_knob(*flags.power_limit), "--power-limit");
  if (flags.sm_clock)
    settings.sm_clock_mhz = static_cast<unsigned>(
        one_value(plan::parse_clock_knob(plan::kSmClockKnob, *flags.sm_clock), "--sm-clock"));
  if (flags.mem_clock)
    settings.mem_clock_mhz = static_cast<unsigned>(
        one_value(plan::parse_clock_knob(plan::kMemClockKnob, *flags.mem_clock), "--mem-clock"));
  return settings;
}

int run_measure(const MeasureFlags& flags) {
  // The one stop-signal handler, from here to the exit: a SIGINT/SIGTERM/SIGHUP is passed on to the job
  // while it runs, and recorded (never fatal) before it starts and while the tail is sampled and the
  // files are written; measure then exits 128+N whatever the job made of the signal.
  std::optional<workload::StopSignals> own_signals;  // main() installs them first; a library caller may not
  if (!workload::StopSignals::installed()) own_signals.emplace();
  check_job(flags, kMeasureJob);
  const auto nvtx_environment = nvtx_job_environment(flags.nvtx, !flags.simulate.empty());
  experiment::AgentOptions agent;
  agent.settings = hardware_settings(flags);
  if (!flags.simulate.empty() && !agent.settings.empty())
    throw usage_error("--power-limit, --sm-clock and --mem-clock set real GPUs: drop them with --simulate");

  // Open every output first: an unwritable path must fail before the job runs, not after.
  std::optional<OutputFile> trace, phases, json;
  if (!flags.trace.empty()) {
    trace.emplace(flags.trace);
    phases.emplace(phases_path(flags.trace));
  }
  if (!flags.json.empty()) json.emplace(flags.json);
  std::optional<OutputFile> summary;
  if (!flags.output.empty()) {
    if (flags.output == "-" && json && json->path() == "-")
      throw usage_error("-o - and --json - both want stdout: write one of them to a file");
    summary.emplace(flags.output);
  }
  // Under srun every result names its SLURM task, so that `wattwise merge` can gather a job's
  // (docs/slurm.md).
  const auto slurm_task = slurm::current_slurm_task();
  std::optional<OutputFile> task_result;
  if (!flags.out_dir.empty()) {
    if (!slurm_task)
      throw usage_error(
          "--out-dir names its file by SLURM job, step and task, and SLURM_JOB_ID is not set: run "
          "it under srun or sbatch, or use --json FILE");
    task_result.emplace(slurm::prepare_result_path(flags.out_dir, *slurm_task).string());
  }

  measure::MeasureOptions options = measure_options(flags);
  const FootprintRates rates = footprint_rates(flags.footprint);  // checked before the job runs
  options.job_stdout_to_stderr = json && json->path() == "-";
  options.extra_environment.insert(nvtx_environment.begin(), nvtx_environment.end());

  measure::Measurement m;
  experiment::AgentOutcome agent_outcome;
  nlohmann::json settings_result;  // null: no setting asked
  CommandGpus gpus(flags.simulate, flags.sim, false);
  hw::GpuSystem& system = gpus.system();
  choose_gpus(system, flags, options);
  if (gpus.simulated()) {
    m = measure::measure_simulated(gpus.simulation(), options);
  } else {
    // On a terminal, a live line (elapsed, energy so far, power now) while the job runs; and the energy of
    // the windows the job asks for (`wattwise.window()`, docs/windows.md).
    window::WindowServer windows;
    options.extra_environment[window::WindowServer::kEnvironmentVariable] = windows.socket_path().string();
    measure::JobWatcher status;
    if (!flags.no_status && ::isatty(STDERR_FILENO) == 1) status = measure::status_line_watcher(stderr);
    options.while_job_runs = measure::watch_together({status, window::window_server_watcher(windows)});
    options.on_gpu_failed = [](const hw::GpuIdentity& gpu, Nanos since, const sampling::SourceFailure& f) {
      std::cerr << report::gpu_failure_warning(gpu, since, f) + "\n" << std::flush;
    };
    if (!agent.settings.empty()) {
      // Root, the daemon, or a refusal; measure's GPUs are never read-only, so they have controls.
      agent.settings_access = settings_access_for(*gpus.controllable(), flags.no_daemon);
    }
    agent_outcome = experiment::measure_under_settings(system, flags.command, options, agent);
    m = std::move(agent_outcome.measurement);
    settings_result = experiment::settings_json(agent.settings, agent_outcome, system,
                                                experiment::job_gpu_positions(options, system.count()));
  }

  // Files first, then the summary: if the terminal is gone, the data is still saved.
  if (trace) {
    report::write_trace_csv(trace->stream(), m);
    trace->commit();
    report::write_phases_csv(phases->stream(), m);
    phases->commit();
  }
  if (json || task_result) {
    auto result = report::measure_json(m, rates);
    result["slurm"] = slurm_task ? slurm::to_json(*slurm_task) : nlohmann::json(nullptr);
    result["settings"] = settings_result;
    for (auto* file : {json ? &*json : nullptr, task_result ? &*task_result : nullptr}) {
      if (file == nullptr) continue;
      file->stream() << json_text(result, 1) << "\n";
      file->commit();
    }
  }
  // The job owns stdout and stderr; the summary goes where `perf stat` puts its own, to stderr, after the
  // job's output (or to -o FILE).
  std::ostream& human = summary ? summary->stream() : std::cerr;
  human << report::measure_summary(m, rates);
  if (trace) human << fmt::format("   trace: {} (phases: {})\n", flags.trace, phases_path(flags.trace));
  if (task_result)
    human << fmt::format("   SLURM task result: {} (`wattwise merge {}`)\n", task_result->path(),
                         flags.out_dir);
  if (summary) summary->commit();
  if (agent_outcome.changed_settings && !agent_outcome.restore.all_ok()) {
    std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s",
                 agent_outcome.restore.summary().c_str());
    return static_cast<int>(ErrorKind::kEnvironment);
  }
  if (workload::StopSignals::stop_requested()) {
    const int signal_number = workload::StopSignals::signal_number();
    std::fprintf(stderr, "wattwise: stopped by SIG%s (the job's exit status: %d)\n",
                 ::sigabbrev_np(signal_number) ? ::sigabbrev_np(signal_number) : "?", m.outcome.exit_code);
    return workload::StopSignals::exit_code();
  }
  // The job's own failure comes first; a job that succeeded while a GPU failed gets 3 (environment): its
  // figures are incomplete (docs/measure-json.md).
  if (m.outcome.exit_code == 0 && !m.complete()) return static_cast<int>(ErrorKind::kEnvironment);
  return m.outcome.exit_code;
}

}  // namespace

CommandRun add_measure_command(CLI::App& app) {
  auto flags = std::make_shared<MeasureFlags>();
  app.add_option("--gpus", flags->gpus,
                 "GPUs to measure, all the job's: indices or UUIDs, comma separated, or all (default: those "
                 "CUDA_VISIBLE_DEVICES names if it is set, else all)");
  app.add_option("--other-gpus", flags->other_gpus,
                 "GPUs outside CUDA_VISIBLE_DEVICES: omit (default: on a shared node they are other jobs', "
                 "and reading them costs CPU) or report (sampled, shown apart, never in the job's energy)")
      ->capture_default_str();
  app.add_option("--interval", flags->interval_ms, "period of power and telemetry readings, ms, 1 to 10000")
      ->capture_default_str();
  app.add_option("--counter-interval", flags->counter_interval_ms,
                 "expert: read each GPU's energy counter at this fixed period, ms, 3 x GPUs to 10000 "
                 "(default: just after every 10th of the counter's ~100 ms postings, locked to them)");
  app.add_option("--counter-postings", flags->counter_postings,
                 "expert: read each GPU's energy counter just after every Nth of its ~100 ms postings, 1 to 20 "
                 "(default 10: once a second; each read costs ~4-9 ms of CPU on an H100, docs/measure-json.md)")
      ->excludes("--counter-interval");
  app.add_option(
      "--pcie-interval", flags->pcie_interval_ms,
      "read PCIe throughput every this many ms, 1000 to 3600000, into the trace's pcie_tx_mbps and "
      "pcie_rx_mbps (default: not read: each read blocks sampling ~42 ms on an H100)");
  app.add_flag("--no-daemon", flags->no_daemon, kNoDaemonHelp);
  app.add_flag(
      "--no-status", flags->no_status,
      "no live status line (elapsed, energy so far, power) on stderr while the job runs; it is shown "
      "only when stderr is a terminal");
  app.add_option("-o,--output", flags->output,
                 "write the summary to this file ('-': stdout) instead of stderr, where it follows the job's "
                 "own output");
  app.add_option("--trace", flags->trace, "write every reading to this CSV (phases beside it)");
  app.add_option("--json", flags->json,
                 "write the result as JSON to this file ('-': stdout, which then carries the JSON alone: the "
                 "job's own stdout goes to stderr, and so does the summary)");
  app.add_option(
      "--out-dir", flags->out_dir,
      "under SLURM (srun): write this task's JSON into this directory, named by job, step, node and "
      "task, for `wattwise merge` (created if missing)");
  app.add_option("--timeout", flags->timeout_s,
                 "stop the job after this many seconds, 0.001 to 31622400 (SIGTERM, then SIGKILL)");
  app.add_option(
      "--job-gpus", flags->job_gpus,
      "the job uses the first N measured GPUs (1 to their count); the others are reported as idle");
  app.add_option("--power-limit", flags->power_limit,
                 "hold the job's GPUs at this power limit, W, while the job runs, then restore (guarded "
                 "like a sweep: lock, journal, watchdog); `sweep --slurm` starts one such agent per node");
  app.add_option("--sm-clock", flags->sm_clock, "lock the job GPUs' SM clock, MHz, while the job runs");
  app.add_option("--mem-clock", flags->mem_clock, "lock the job GPUs' memory clock, MHz, while the job runs");
  add_job_flags(app, *flags, kMeasureJob);
  app.add_option("--seed", flags->sim.seed, "simulated job: noise seed")->needs("--simulate");
  return [flags]() { return run_measure(*flags); };
}

}  // namespace wattwise::cli
