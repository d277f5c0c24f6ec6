// `wattwise sweep`: parses the knobs and options, wires the real or simulated GPUs and job to the
// experiment runner, and prints the analysis at the end. The logic lives in experiment/runner.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/analysis.hpp"
#include "analysis/reference.hpp"
#include "cli/adaptive_flags.hpp"
#include "cli/analysis_flags.hpp"
#include "cli/command_gpus.hpp"
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/footprint_flags.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/node_flags.hpp"
#include "cli/nvtx_flags.hpp"
#include "cli/settings_path.hpp"
#include "cli/sweep_flags.hpp"
#include "core/error.hpp"
#include "core/private_dir.hpp"
#include "experiment/multi_node_run.hpp"
#include "experiment/runner.hpp"
#include "experiment/simulated_runs.hpp"
#include "experiment/sweep_setup.hpp"
#include "measure/session.hpp"
#include "measure/simulated_session.hpp"
#include "plan/validate.hpp"
#include "report/analysis_report.hpp"
#include "report/footprint_report.hpp"
#include "report/trace_csv.hpp"
#include "safety/dry_run.hpp"
#include "safety/settings_guard.hpp"
#include "sampling/sampler_config.hpp"
#include "store/analysis_runs.hpp"
#include "store/durable_file.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::cli {

namespace {

// A simulated epoch has thousands of iterations; marking the first few keeps a 150-run sweep fast.
constexpr std::int64_t kSimulatedIterationMarkers = 8;
constexpr int kSimulatedIntervalMs = 100;

// --job-gpus N or --job-gpus {gpus}: how many of the measured GPUs this run's job uses (the rest are idle).
// Checked for every run before the first one (validate_sweep_flags), so it cannot fail half-way.
std::size_t job_gpu_count(const std::string& spec, const std::map<std::string, std::string>& params,
                          std::size_t measured_gpus) {
  const auto text = plan::substitute_params({spec}, params).front();
  if (text == spec) return parse_count("--job-gpus", text, 1, measured_gpus);
  try {
    return parse_count("--job-gpus", text, 1, measured_gpus);
  } catch (const Error&) {
    throw usage_error(
        fmt::format("--job-gpus {} gives '{}' in a run: each value must be a whole number from 1 "
                    "to {} (the GPUs measured)",
                    spec, text, measured_gpus));
  }
}

// Whether the plan's runs give the job different numbers of GPUs (--job-gpus {gpus} over a knob with more
// than one value): compared as the text each run gets, so nothing is refused here (validate_sweep_flags is).
bool gpu_count_varies(const SweepFlags& flags, const plan::Plan& plan) {
  if (!flags.job_gpus) return false;
  std::set<std::string> counts;
  for (const auto& run : plan.runs)
    counts.insert(plan::substitute_params({*flags.job_gpus}, run.params).front());
  return counts.size() > 1;
}

}  // namespace

namespace {

// --trace-dir: each run's trace and phases as CSV files, and the trace in the database per GPU. The files
// are written complete (temporary name, checked writes, fsync, rename) before the run is committed with its
// traces in one transaction: a full disk throws "disk full writing ..." and leaves the run out of the
// database, so --resume runs it again and overwrites the files; no stored run ever lacks its trace.
experiment::RunExtrasFn trace_writer(const std::filesystem::path& dir) {
  return [dir](const plan::PlannedRun& run, const measure::Measurement& m, store::RunRecord& record) {
    std::ostringstream trace;
    report::write_trace_csv(trace, m);
    std::ostringstream phases;
    report::write_phases_csv(phases, m);
    store::write_file_durably(dir / fmt::format("run-{:04}.csv", run.index), trace.str());
    store::write_file_durably(dir / fmt::format("run-{:04}.phases.csv", run.index), phases.str());
    for (const auto& gpu : m.gpus) {
      std::ostringstream own;  // the same file with only this GPU's rows
      report::write_trace_csv(own, m, gpu.index);
      record.traces.push_back({gpu.index, own.str()});
    }
  };
}

// `sweep --resume --db X` with no knobs and no command takes the plan, the command and the options from X.
bool plan_from_database(const SweepFlags& flags) {
  return flags.resume && !flags.power_limit && !flags.sm_clock && !flags.mem_clock && flags.params.empty() &&
         flags.command.empty() && flags.simulate.empty();
}

// --trace-dir is made now, so a path that cannot hold the traces fails before the first run.
void check_trace_dir(const std::filesystem::path& dir) {
  std::error_code error;
  if (std::filesystem::exists(dir, error) && !std::filesystem::is_directory(dir, error))
    throw usage_error(fmt::format("--trace-dir {} is not a directory: give a directory", dir.string()));
  std::filesystem::create_directories(dir, error);
  if (error || ::access(dir.c_str(), W_OK | X_OK) != 0)
    throw environment_error(
        fmt::format("--trace-dir {}: cannot write there ({}): choose a writable directory", dir.string(),
                    error ? error.message() : std::string(std::strerror(errno))));
}

}  // namespace

SweepAnalysis print_analysis(const std::string& db, const std::optional<analysis::Setting>& reference,
                             const FootprintRates& rates,
                             const std::optional<analysis::EnergyScope>& energy_scope,
                             const std::vector<analysis::MetricSpec>& metrics, const std::string& knob,
                             const std::optional<std::string>& max_slowdown) {
  SweepAnalysis result;
  auto& recommended = result.recommended;
  try {
    const auto stored = store::read_analysis_runs(store::ResultsStore::open_read_only(db));
    analysis::AnalysisOptions options;
    options.default_setting = reference;
    options.energy_scope = energy_scope;
    if (max_slowdown) apply_max_slowdown(*max_slowdown, options);  // as analyze --max-slowdown
    for (const auto& metric : metrics) {
      const auto same = [&](const analysis::MetricSpec& m) { return m.name() == metric.name(); };
      if (std::ranges::none_of(options.metrics, same)) options.metrics.push_back(metric);
    }
    const analysis::Analysis analysis = analysis::analyze(stored.runs, options);
    std::cout << report::analysis_text(analysis) << report::savings_text(analysis, rates);
    for (const auto& rec : analysis.recommendations)
      if (const auto value = rec.setting.find(knob); value != rec.setting.end())
        recommended[rec.metric.name()] = value->second;
    result.headline = report::headline_text(analysis);
  } catch (const Error& e) {
    std::cout << fmt::format("no analysis: {}\n", e.what());
  }
  return result;
}

namespace {

// The sampling periods and time-out of every run, from the duration flags (one parser for all of them).
measure::MeasureOptions sampling_options(const SweepFlags& flags, bool simulated,
                                         const measure::JobGpuSelection& selection) {
  measure::MeasureOptions measure_options;
  measure_options.gpu_positions = selection.positions;
  measure_options.via_mig = selection.via_mig;
  measure_options.job_gpu_source = selection.source;
  if (selection.job_gpu_count < selection.positions.size())
    measure_options.job_gpu_count = selection.job_gpu_count;
  measure_options.sampler.fast_period = parse_duration(
      "--interval", flags.interval_ms, DurationUnit::kMilliseconds, kMinIntervalMs, kMaxIntervalMs);
  if (simulated && flags.interval_option->count() == 0 && !flags.interval_from_db) {
    // The simulated GPU's counter and instantaneous power change every 100 ms and its 20 ms power samples
    // are buffered (each tick drains them all), so 100 ms ticks lose nothing and make a sweep faster.
    measure_options.sampler.fast_period = std::chrono::milliseconds(kSimulatedIntervalMs);
    measure_options.sampler.counter_period = std::chrono::milliseconds(kSimulatedIntervalMs);
  }
  if (flags.timeout_s)
    measure_options.timeout =
        parse_duration("--timeout", *flags.timeout_s, DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS);
  measure_options.node = node_options(flags.node);
  measure_options.extra_environment = nvtx_job_environment(flags.nvtx, simulated);  // before any change
  // A root-only RAPL file or a meter given up is said once per sweep, not once per run.
  auto said = std::make_shared<std::set<std::string>>();
  measure_options.node.on_warning = [said](const std::string& line) {
    if (said->insert(line).second) std::cerr << line << "\n" << std::flush;
  };
  // The sampler refuses bad periods itself, but only when the first run starts: ask it now.
  sampling::resolve_periods(measure_options.sampler, selection.positions.size());
  return measure_options;
}

// Everything about the flags that can be wrong, checked before any setting changes and any job runs
// (docs/sweep.md "What is checked before the first run"). The GPU's limits and permissions are checked by
// the runner (safety::validate_hardware_settings) before it locks the GPUs.
void validate_sweep_flags(const SweepFlags& flags, const plan::Plan& plan, hw::GpuSystem& system,
                          const std::vector<std::size_t>& gpu_indices) {
  // Given on the command line, even as '' (refused: `--cooldown ''` once ran with the default 60 s).
  if (flags.cooldown_option->count() > 0 || !flags.cooldown.empty())
    parse_duration("--cooldown", flags.cooldown, DurationUnit::kSeconds, kMinCooldownS, kMaxCooldownS);
  plan::check_placeholders(flags.command, plan.spec, "the command");
  if (flags.job_gpus) plan::check_placeholders({*flags.job_gpus}, plan.spec, "--job-gpus");
  plan::check_numeric_job_knobs(plan.spec);
  if (!flags.reference.empty())
    plan::check_reference(analysis::parse_setting_spec(flags.reference), plan.spec);
  if (flags.job_gpus)
    for (const auto& run : plan.runs) job_gpu_count(*flags.job_gpus, run.params, gpu_indices.size());
  for (std::size_t index : gpu_indices) {
    hw::GpuReadings& gpu = system.gpu(index);
    plan::SupportedClocks clocks;
    clocks.gpu = fmt::format("GPU {} ({})", gpu.identity().index, gpu.identity().uuid);
    clocks.mem_mhz = gpu.supported_mem_clocks_mhz();
    for (unsigned mem : clocks.mem_mhz)
      for (unsigned sm : gpu.supported_sm_clocks_mhz(mem)) clocks.sm_mhz.push_back(sm);
    plan::check_clocks(plan, clocks);
  }
  if (!flags.trace_dir.empty() && !flags.dry_run) check_trace_dir(flags.trace_dir);
  if (flags.adaptive.enabled) adaptive_config(flags.adaptive, plan, std::nullopt, flags.seed, flags.max_slowdown);
}

// The path a sweep of these settings on real GPUs changes their settings through: root or the daemon
// (settings_path.hpp), or a one-line refusal before the database is created or a job runs. None where the
// settings change no hardware knob or the GPUs are seen read-only (a --read-only sweep's hardware knobs were
// refused before). The real sweep and its dry run both ask here, so the dry run meets what the real sweep
// would.
std::shared_ptr<const safety::SettingsAccess> real_settings_path(
    CommandGpus& gpus, const std::vector<plan::HardwareSettings>& settings, bool no_daemon) {
  hw::ControllableGpuSystem* controls = gpus.controllable();
  if (!controls || !plan::changes_hardware(settings)) return nullptr;
  return settings_access_for(*controls, no_daemon);
}

// --dry-run: the plan and every change per GPU, after the check the real sweep would make before run 1 (as a
// user, the daemon's policy, asked with `wwd1 check`): a refusal shows now, as the same one line and exit
// code, not at run 78. Nothing is changed, held or written.
int print_dry_run(CommandGpus& gpus, const experiment::SweepOptions& options, bool no_daemon) {
  hw::GpuSystem& system = gpus.system();
  const auto settings = plan::hardware_settings_of(options.plan);
  const auto access = gpus.simulated() ? nullptr : real_settings_path(gpus, settings, no_daemon);
  if (access)
    access->validate(system, options.gpu_indices, settings);
  else
    safety::validate_hardware_settings(system, options.gpu_indices, settings);
  std::cout << safety::describe_dry_run(system, options.gpu_indices, options.plan);
  if (access)
    std::cout << (access->name() == "root"
                      ? "settings: changed by this process as root (GPU locks, journal, watchdog)\n"
                      : "settings: changed through the wattwise daemon, whose policy allows every value "
                        "above\n");
  return 0;
}

int run_sweep_command(SweepFlags flags) {
  // The one stop-signal handler, first (as in `measure`): a SIGINT/SIGTERM/SIGHUP during the set-up below
  // (reading CUDA_VISIBLE_DEVICES and the GPUs, opening the database) is recorded, and the runner stops
  // before its first run with the usual message, instead of the signal's default action killing wattwise
  // without a word.
  // main() installs them before it parses the command line; a library caller may not have.
  std::optional<workload::StopSignals> own_signals;
  if (!workload::StopSignals::installed()) own_signals.emplace();
  nlohmann::json stored_plan;  // null unless `--resume --db X` alone takes the plan from X
  if (plan_from_database(flags)) stored_plan = load_stored_sweep(flags);
  const bool simulated = !flags.simulate.empty();
  check_job(flags, kSweepJob);
  if (!flags.slurm && (flags.nodes || !flags.srun_args.empty()))
    throw usage_error("--nodes and --srun-arg are for a multi-node sweep: add --slurm (docs/slurm.md)");
  // A wrong --max-slowdown is told now, not after the runs, when the analysis reads it: before the
  // multi-node sweep too, whose dry run would pass it and whose analysis would print "no analysis" after
  // every step.
  if (flags.max_slowdown) analysis::parse_max_slowdown_flag(*flags.max_slowdown);
  if (flags.slurm) return run_multi_node_sweep(flags, stored_plan);
  if (const unsigned repeats = adaptive_plan_repeats(flags.adaptive, *flags.app,
                                                     flags.resume && stored_plan.is_null() ? flags.db : ""))
    flags.repeat = repeats;
  const FootprintRates rates = footprint_rates(flags.footprint);  // before any GPU is touched

  if (simulated && !flags.sim.iteration_markers_per_epoch)
    flags.sim.iteration_markers_per_epoch = kSimulatedIterationMarkers;
  CommandGpus gpus(flags.simulate, flags.sim, flags.read_only);
  hw::GpuSystem& system = gpus.system();

  experiment::SweepOptions options;
  // The job's GPUs are set and measured; with --other-gpus report the others are measured too, never set.
  measure::JobGpuSelection selection =
      measure::select_job_gpus(system, job_gpu_request(system, flags.gpus, flags.other_gpus, simulated));
  for (const auto& warning : selection.warnings) std::cerr << "wattwise: " << warning << "\n";
  options.gpu_indices.assign(selection.positions.begin(),
                             selection.positions.begin() + static_cast<long>(selection.job_gpu_count));
  options.plan = plan::make_plan(stored_plan.is_null() ? plan_spec(flags, system, options.gpu_indices.front())
                                                       : plan::plan_spec_from_json(stored_plan));
  if (flags.read_only && plan::changes_hardware(plan::hardware_settings_of(options.plan)))
    throw usage_error("--read-only sweeps job knobs only: drop --power-limit, --sm-clock and --mem-clock");
  const std::optional<analysis::EnergyScope> energy_scope =
      flags.energy_scope.empty() ? std::nullopt
                                 : std::optional(analysis::parse_energy_scope(flags.energy_scope));
  const bool gpu_count_sweep = !simulated && gpu_count_varies(flags, options.plan);
  if (gpu_count_sweep && flags.other_gpus == "omit" && !(flags.app && flags.app->count("--other-gpus") > 0)) {
    // Judged on the node by default: every GPU of the node is sampled, so the idle ones' draw is counted.
    flags.other_gpus = "report";
    selection =
        measure::select_job_gpus(system, job_gpu_request(system, flags.gpus, flags.other_gpus, simulated));
  }
  measure::MeasureOptions measure_options = sampling_options(flags, simulated, selection);
  validate_sweep_flags(flags, options.plan, system, options.gpu_indices);
  if (flags.dry_run) {
    if (flags.adaptive.enabled)
      std::cout << adaptive_dry_run_note(
          adaptive_config(flags.adaptive, options.plan, std::nullopt, flags.seed, flags.max_slowdown),
          options.plan.runs.size());
    return print_dry_run(gpus, options, flags.no_daemon);
  }
  if (gpu_count_sweep) {
    const char* judged =
        energy_scope == analysis::EnergyScope::kJob
            ? "the job's GPUs alone (--energy-scope job)"
            : "the node's energy, idle GPUs included (--energy-scope job for the job's GPUs alone)";
    std::cerr << fmt::format(
        "wattwise: the GPU count varies (--job-gpus {}): "
        "every GPU the sweep can see is sampled ({}), and the runs are judged on {}\n",
        *flags.job_gpus, selection.positions.size(), judged);
  }

  std::optional<analysis::Setting> reference;
  if (stored_plan.is_null()) {
    reference = flags.reference.empty() ? experiment::default_reference(
                                              options.plan.spec, system.gpu(options.gpu_indices.front()))
                                        : analysis::parse_setting_spec(flags.reference);
    options.plan_json = plan::plan_spec_to_json(options.plan.spec);
    if (reference) options.plan_json["reference"] = *reference;
  } else {
    options.plan_json = stored_plan;
    if (stored_plan.contains("reference")) reference = stored_plan.at("reference").get<analysis::Setting>();
  }
  options.db_path = flags.db.empty() ? default_db_path() : flags.db;
  options.meta.command =
      simulated ? "simulate " + flags.simulate : fmt::format("{}", fmt::join(flags.command, " "));
  if (!simulated) options.meta.command_argv = flags.command;
  options.meta.sweep_options = experiment::sweep_options_json(stored_options(flags));
  options.meta.measurement_method = "per run: see runs.method";
  options.resume = flags.resume;
  options.allow_mixed_results = flags.allow_mixed_results;
  options.max_failures = flags.max_failures;
  if (flags.cooldown_option->count() > 0 || flags.cooldown_from_db) {
    experiment::CooldownOptions cooldown;
    cooldown.max_wait = flags.cooldown.empty()
                            ? from_seconds(kDefaultCooldownMaxS)
                            : parse_duration("--cooldown", flags.cooldown, DurationUnit::kSeconds,
                                             kMinCooldownS, kMaxCooldownS);
    options.cooldown = cooldown;
  }
  if (!flags.trace_dir.empty()) options.keep_extras = trace_writer(flags.trace_dir);
  // The settings path, made from the GPUs' controls: a --read-only sweep has none to give (its hardware
  // knobs were refused above), so it gets no path and nothing below can change a GPU. A simulated sweep
  // keeps its journal and locks in a private state directory: they name simulated GPUs, which must never
  // show up as a stale journal of the real ones.
  std::optional<PrivateDir> private_state;
  if (hw::ControllableGpuSystem* controls = gpus.controllable(); controls && simulated) {
    private_state.emplace("wattwise-sim", "the simulated sweep's state directory");
    options.settings_access = std::make_shared<safety::LocalSettingsAccess>(
        *controls, private_state->path(), safety::WatchdogLaunch{}, "simulated");
  } else {
    options.settings_access =
        real_settings_path(gpus, plan::hardware_settings_of(options.plan), flags.no_daemon);
  }
  experiment::Progress progress = experiment::Progress::for_stderr();
  progress.name_database(options.db_path.string());
  options.progress = &progress;
  std::function<std::string(const std::map<std::string, double>&)> adaptive_summary;
  std::optional<experiment::AdaptiveConfig> adaptive;
  if (flags.adaptive.enabled) {
    adaptive = adaptive_config(flags.adaptive, options.plan, reference, flags.seed, flags.max_slowdown);
    adaptive_summary = wire_adaptive_sweep(*adaptive, options);
  }

  experiment::MeasureRunFn measure_run;
  std::unique_ptr<Clock> monotonic;
  Clock* clock = nullptr;
  if (simulated) {
    clock = gpus.simulation().clock.get();
    measure_run = experiment::simulated_measure_run(gpus.simulation(), measure_options, flags.seed);
  } else {
    monotonic = std::make_unique<MonotonicClock>();
    clock = monotonic.get();
    measure_run = [&](const plan::PlannedRun& run) {
      measure::MeasureOptions per_run = measure_options;
      per_run.keep_output_tail = true;  // stored with the run: `wattwise runs DB --failed` shows it
      for (const auto& [name, value] : plan::param_environment(run.params))
        per_run.extra_environment[name] = value;
      if (flags.job_gpus) {
        per_run.job_gpu_count = job_gpu_count(*flags.job_gpus, run.params, options.gpu_indices.size());
        per_run.job_gpu_source = "--job-gpus";
      }
      return measure::measure_command(system, plan::substitute_params(flags.command, run.params), per_run);
    };
  }

  const experiment::SweepOutcome outcome = experiment::run_sweep(system, options, measure_run, *clock);
  if (outcome.changed_hardware && !outcome.restore.all_ok())
    std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", outcome.restore.summary().c_str());
  SweepAnalysis analysed;
  if (outcome.runs_done > 0 || outcome.runs_skipped > 0) {
    analysed = adaptive ? print_analysis(options.db_path.string(), reference, rates, energy_scope,
                                         adaptive->metrics, adaptive->knob, flags.max_slowdown)
                        : print_analysis(options.db_path.string(), reference, rates, energy_scope, {}, "",
                                         flags.max_slowdown);
  }
  if (adaptive_summary) std::cout << adaptive_summary(analysed.recommended);
  std::cout << (analysed.headline.empty() ? "" : "\n" + analysed.headline);
  std::cout << fmt::format("results: {}\n", options.db_path.string());
  std::fprintf(stderr, "wattwise: %s\n", outcome.summary().c_str());
  return outcome.exit_code();
}

}  // namespace

CommandRun add_sweep_command(CLI::App& app) {
  auto flags = std::make_shared<SweepFlags>();
  add_sweep_flags(app, *flags);
  return [flags]() {
    SweepFlags copy = *flags;
    copy.sim.seed = copy.seed;
    if (copy.nodes) copy.params.push_back(std::string(experiment::kNodesKnob) + "=" + *copy.nodes);
    return run_sweep_command(copy);
  };
}

}  // namespace wattwise::cli
