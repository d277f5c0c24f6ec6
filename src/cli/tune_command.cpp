#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "analysis/metrics.hpp"
#include "cli/command_gpus.hpp"
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/job_flags.hpp"
#include "cli/output_file.hpp"
#include "cli/settings_path.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "core/numbers.hpp"
#include "experiment/replay_table.hpp"
#include "experiment/runner.hpp"
#include "measure/job_gpus.hpp"
#include "report/measure_report.hpp"
#include "tune/live_report.hpp"
#include "tune/live_session.hpp"
#include "tune/live_store.hpp"
#include "tune/simulated_tune.hpp"
#include "window/window_server.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::cli {

namespace {

const JobCommand kTuneJob{"tune", "`wattwise tune [options] -- CMD ARGS`", false};

struct TuneFlags : JobFlags {
  std::string knob = "power-limit";
  std::string metric = "E";
  std::optional<std::string> max_slowdown;
  std::optional<std::string> range;  // MIN:MAX in the knob's unit
  std::optional<std::string> gpus;
  std::string json;
  std::string db;
  bool dry_run = false;
  bool no_daemon = false;  // never change settings through the settings daemon
  std::string marker_grace_s = "60";
  std::string stationary_window_s = "30";
  std::optional<std::string> timeout_s;
  std::string iterations = "2000";  // of a simulated job (parse_count: a negative one is no count)
  std::uint64_t seed = 1;
};

// Exit status of a job that sent no iteration marker (docs/tune.md "Exit status"): nothing was tuned.
constexpr int kNoMarkersExit = static_cast<int>(ErrorKind::kData);
constexpr double kMinMarkerGraceS = 1;
constexpr double kMaxMarkerGraceS = 24 * 3600;
constexpr double kMinStationaryWindowS = 0.1;
constexpr double kMaxStationaryWindowS = 600;
// A simulated iteration takes ~4 us: ten million run in under a minute. More is a typo (or "-5", which an
// unsigned flag would read as 2^64 - 5 and run for ever).
constexpr std::size_t kMaxSimulatedIterations = 10'000'000;

tune::TuneKnob parse_knob(const std::string& text) {
  if (text == "power-limit") return tune::TuneKnob::kPowerLimit;
  if (text == "sm-clock") return tune::TuneKnob::kSmClock;
  throw usage_error(fmt::format("--knob {}: unknown knob; give power-limit or sm-clock", text));
}

tune::KnobRange parse_range(const std::optional<std::string>& text) {
  if (!text) return {};
  const auto colon = text->find(':');
  auto number = [&](const std::string& part) {
    if (const auto value = parse_number(part)) return *value;
    throw usage_error(fmt::format("--range {}: give MIN:MAX in the knob's unit, e.g. 200:400", *text));
  };
  if (colon == std::string::npos) number("");
  return {number(text->substr(0, colon)), number(text->substr(colon + 1))};
}

// Everything the flags can get wrong, before any GPU is read or any setting changes.
tune::TunerConfig tuner_config(const TuneFlags& flags) {
  tune::TunerConfig config;
  config.knob = parse_knob(flags.knob);
  config.metric = analysis::parse_metric(flags.metric);
  if (config.metric.kind == analysis::MetricKind::kGainLoss ||
      config.metric.kind == analysis::MetricKind::kTime)
    throw usage_error(fmt::format("--metric {}: tune minimises E, edp, ed2p or eds:K", flags.metric));
  if (flags.max_slowdown) config.max_slowdown = analysis::parse_max_slowdown_flag(*flags.max_slowdown);
  config.stationary_window_s =
      to_seconds(parse_duration("--stationary-window", flags.stationary_window_s, DurationUnit::kSeconds,
                                kMinStationaryWindowS, kMaxStationaryWindowS));
  return config;
}

void print_outcome(std::ostream& human, const measure::Measurement& m, const tune::LiveTuningResult& r,
                   const FootprintRates& rates) {
  human << report::measure_summary(m, rates) << tune::tune_summary(r);
}

int run_simulated(const TuneFlags& flags, tune::TunerConfig config, std::uint64_t iterations,
                  std::optional<OutputFile>& json) {
  if (!flags.db.empty()) throw usage_error("--db keeps a real job's trace: drop it with --simulate");
  const tune::KnobRange range = parse_range(flags.range);
  if (range.min_value) config.min_value = *range.min_value;
  if (range.max_value) config.max_value = *range.max_value;
  // The simulated job drifts as a real GPU does (warm-up, wander, neighbouring iterations alike); a dry run
  // keeps it at the start value throughout: the A/A test.
  const tune::SimulatedTuneResult s = tune::simulate(flags.simulate, config, flags.seed, iterations,
                                                     tune::IterationNoise::typical(), flags.dry_run,
                                                     experiment::read_replay_table);
  const tune::LiveTuningResult r = tune::tuning_result_of(s, flags.dry_run);
  nlohmann::json out = tune::tune_json(r);
  out["simulated"] = {{"gpu", s.gpu_name},          {"model", s.model},       {"seed", flags.seed},
                      {"iterations", s.iterations}, {"energy_j", s.energy_j}, {"time_s", s.time_s}};
  if (json) {
    json->stream() << json_text(out, 1) << "\n";
    json->commit();
  }
  // For people: stderr, as `measure` (stdout is the job's, or the JSON's with --json -).
  std::cout << std::flush;
  std::cerr << fmt::format(" simulated job: {} on {} ({} iterations, seed {}): {:.1f} s, {:.1f} kJ\n",
                           s.model, s.gpu_name, s.iterations, flags.seed, s.time_s, s.energy_j / 1000)
            << tune::tune_summary(r) << std::flush;
  return 0;
}

int exit_code_of(const tune::TuneJobOutcome& outcome) {
  const measure::Measurement& m = outcome.measurement;
  if (outcome.changed_settings && !outcome.restore.all_ok()) return static_cast<int>(ErrorKind::kEnvironment);
  if (workload::StopSignals::stop_requested()) {
    const int signal_number = workload::StopSignals::signal_number();
    std::fprintf(stderr, "wattwise: stopped by SIG%s (the job's exit status: %d)\n",
                 ::sigabbrev_np(signal_number) ? ::sigabbrev_np(signal_number) : "?", m.outcome.exit_code);
    return workload::StopSignals::exit_code();
  }
  if (m.outcome.exit_code != 0) return m.outcome.exit_code;
  if (!outcome.tuning.error.empty() || !m.complete()) return static_cast<int>(ErrorKind::kEnvironment);
  if (outcome.tuning.no_markers) return kNoMarkersExit;
  return 0;
}

// Every setting the tuner may apply: tune::knob_values (the start value is the GPU's own setting), an SM
// clock taken as the nearest the first job GPU supports (tune::applicable_value).
std::vector<plan::HardwareSettings> candidate_settings(hw::GpuSystem& system, const std::vector<std::size_t>& job_gpus,
                                                       const tune::TunerConfig& tuner) {
  std::vector<unsigned> sm;
  if (tuner.knob == tune::TuneKnob::kSmClock && !job_gpus.empty()) {
    hw::GpuReadings& gpu = system.gpu(job_gpus.front());
    const auto mem = gpu.supported_mem_clocks_mhz();
    if (!mem.empty()) sm = gpu.supported_sm_clocks_mhz(*std::max_element(mem.begin(), mem.end()));
  }
  const std::vector<double> values = tune::knob_values(tuner);  // the start value is the GPU's own
  std::vector<plan::HardwareSettings> settings;
  for (double value : values) {
    plan::HardwareSettings s;
    const double applied = tune::applicable_value(tuner.knob, value, sm);
    if (tuner.knob == tune::TuneKnob::kPowerLimit)
      s.power_limit_w = applied;
    else
      s.sm_clock_mhz = static_cast<unsigned>(applied);
    settings.push_back(s);
  }
  return settings;
}

// The job's GPUs (measure/job_gpus.hpp) and the knob's range on them; warnings go to stderr at once.
void choose_gpus(hw::GpuSystem& system, const TuneFlags& flags, const tune::TunerConfig& config,
                 const tune::KnobRange& range, tune::TuneJobOptions& options) {
  const measure::JobGpuSelection selection =
      measure::select_job_gpus(system, job_gpu_request(system, flags.gpus, "omit", false));
  for (const auto& warning : selection.warnings) std::cerr << "wattwise: " << warning << "\n";
  options.measure.gpu_positions = selection.positions;
  options.measure.via_mig = selection.via_mig;
  options.measure.job_gpu_source = selection.source;
  options.measure.job_gpu_count = selection.job_gpu_count;
  sampling::resolve_periods(options.measure.sampler, selection.positions.size());
  const std::vector<std::size_t> job_gpus(
      selection.positions.begin(), selection.positions.begin() + static_cast<long>(selection.job_gpu_count));
  double captured = 0;
  options.live.tuner = tune::tuner_range_for(system, job_gpus, config, range, captured);
  options.live.captured_value = captured;
}

int run_tune(const TuneFlags& flags) {
  // The one stop-signal handler (as in `measure` and `sweep`; main() installs it before parsing): a signal
  // is passed on to the job and recorded, and the settings are restored before wattwise exits 128+N.
  std::optional<workload::StopSignals> own_signals;
  if (!workload::StopSignals::installed()) own_signals.emplace();
  check_job(flags, kTuneJob);
  const bool simulated = !flags.simulate.empty();
  // Every flag first: a bad value is a usage error before any file, GPU or setting is touched.
  const tune::TunerConfig config = tuner_config(flags);
  const FootprintRates rates = footprint_rates(flags.footprint);  // checked before the job runs
  const tune::KnobRange range = parse_range(flags.range);
  const std::uint64_t simulated_iterations =
      simulated ? parse_count("--iterations", flags.iterations, 1, kMaxSimulatedIterations) : 0;
  tune::TuneJobOptions options;
  options.measure.extra_environment = nvtx_job_environment(flags.nvtx, simulated);
  options.live.marker_grace = parse_duration("--marker-grace", flags.marker_grace_s, DurationUnit::kSeconds,
                                             kMinMarkerGraceS, kMaxMarkerGraceS);
  if (flags.timeout_s)
    options.measure.timeout =
        parse_duration("--timeout", *flags.timeout_s, DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS);
  std::optional<OutputFile> json;  // opened first: an unwritable path fails before the job runs
  if (!flags.json.empty()) json.emplace(flags.json);
  if (simulated) return run_simulated(flags, config, simulated_iterations, json);
  std::optional<tune::TuneStore> db;
  if (!flags.db.empty()) db.emplace(tune::TuneStore::check_new(flags.db));
  options.live.dry_run = flags.dry_run;
  options.live.say = [](const std::string& line) {
    std::cout << std::flush;
    std::cerr << line << "\n" << std::flush;
  };
  options.measure.on_gpu_failed = [](const hw::GpuIdentity& gpu, Nanos since,
                                     const sampling::SourceFailure& f) {
    std::cerr << report::gpu_failure_warning(gpu, since, f) + "\n" << std::flush;
  };
  // A dry run sees the GPUs through a read-only view, which has no controls, and gets no settings path:
  // nothing can change.
  CommandGpus gpus(flags.simulate, {}, flags.dry_run);  // the real ones: a simulated job was tuned above
  if (hw::ControllableGpuSystem* controls = gpus.controllable())
    options.settings_access =
        settings_access_for(*controls, flags.no_daemon, "--range");  // root, the daemon, or a refusal
  hw::GpuSystem& system = gpus.system();
  choose_gpus(system, flags, config, range, options);
  if (options.settings_access) {
    // Every value the search may try, before the job runs or the database is written: through the daemon
    // a refused one is one line now, not a failure mid-job.
    const auto& positions = options.measure.gpu_positions;
    const std::vector<std::size_t> job_gpus(
        positions.begin(),
        positions.begin() + static_cast<long>(options.measure.job_gpu_count.value_or(positions.size())));
    options.settings_access->validate(system, job_gpus, candidate_settings(system, job_gpus, options.live.tuner));
  }
  // The job's GPUs as the database describes them (their power-limit range included), read before the job.
  std::vector<store::StoredGpu> stored_gpus;
  if (db) {
    const auto& positions = options.measure.gpu_positions;
    stored_gpus = experiment::stored_gpus_of(
        system,
        std::vector<std::size_t>(
            positions.begin(),
            positions.begin() + static_cast<long>(options.measure.job_gpu_count.value_or(positions.size()))));
  }

  // The energy of the windows the job asks for (`wattwise.window()`, docs/windows.md), beside the tuner.
  window::WindowServer windows;
  options.measure.extra_environment[window::WindowServer::kEnvironmentVariable] =
      windows.socket_path().string();
  options.measure.while_job_runs = window::window_server_watcher(windows);
  const tune::TuneJobOutcome outcome = tune::run_tune_job(system, flags.command, options);
  if (outcome.changed_settings && !outcome.restore.all_ok())
    std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", outcome.restore.summary().c_str());
  // Files first, then the summary: if the terminal is gone, the data is still saved.
  if (db) db->write(outcome.measurement, outcome.tuning, std::move(stored_gpus), outcome.changed_by);
  if (json) {
    nlohmann::json out = report::measure_json(outcome.measurement, rates);
    out.update(tune::tune_json(outcome.tuning));
    out["settings_changed_by"] = outcome.changed_by;
    json->stream() << json_text(out, 1) << "\n";
    json->commit();
  }
  // For people: stderr, as `measure` (stdout is the job's, or the JSON's with --json -); what this process
  // wrote to stdout goes first, so a combined log keeps the order.
  std::cout << std::flush;
  print_outcome(std::cerr, outcome.measurement, outcome.tuning, rates);
  if (db) std::cerr << fmt::format("   decisions: {}\n", flags.db);
  std::cerr << std::flush;
  return exit_code_of(outcome);
}

}  // namespace

CommandRun add_tune_command(CLI::App& app) {
  auto flags = std::make_shared<TuneFlags>();
  app.add_option("--knob", flags->knob, "the setting to tune: power-limit or sm-clock")
      ->capture_default_str();
  app.add_option("--metric", flags->metric, "what to minimise: E, edp, ed2p or eds:K (K > 1)")
      ->capture_default_str();
  app.add_option("--max-slowdown", flags->max_slowdown,
                 fmt::format("iteration time at most this much above the start's, e.g. 10%; kept to within "
                             "the measurement's precision: a setting whose estimated time is within {:g}% of "
                             "the budget's counts as within it (docs/tune.md)",
                             100 * tune::TunerConfig{}.budget_tolerance));
  app.add_option("--range", flags->range,
                 "MIN:MAX of the knob (W or MHz) within the GPUs' own range (default: all of it)");
  app.add_option("--gpus", flags->gpus,
                 "the job's GPUs, all set alike: indices or UUIDs, comma separated, or all (default: those "
                 "CUDA_VISIBLE_DEVICES names if it is set, else all)");
  app.add_option("--json", flags->json, "write the result as JSON to this file ('-' for stdout)");
  app.add_option("--db", flags->db, "keep the job and the decision trace in this new results database");
  app.add_flag("--no-daemon", flags->no_daemon, kNoDaemonHelp);
  app.add_flag(
      "--dry-run", flags->dry_run,
      "measure and print the decisions it would take; change no setting (for shared machines). Every "
      "candidate then runs at the start value: an A/A test, which passes when it holds the start value");
  app.add_option("--stationary-window", flags->stationary_window_s,
                 "seconds, 0.1 to 600: before measuring the start value, wait until this long a stretch of "
                 "iterations shows no trend (the GPU warmed up)")
      ->capture_default_str();
  app.add_option("--marker-grace", flags->marker_grace_s,
                 "seconds to wait for the job's first iteration marker, 1 to 86400; then say how to add them "
                 "and tune nothing")
      ->capture_default_str();
  app.add_option("--timeout", flags->timeout_s,
                 "stop the job after this many seconds, 0.001 to 31622400 (SIGTERM, then SIGKILL)");
  add_job_flags(app, *flags, kTuneJob);
  app.add_option("--iterations", flags->iterations, "simulated job: iterations, 1 to 10000000")
      ->capture_default_str()
      ->needs("--simulate");
  app.add_option("--seed", flags->seed, "simulated job: noise seed")
      ->capture_default_str()
      ->needs("--simulate");
  return [flags]() { return run_tune(*flags); };
}

}  // namespace wattwise::cli
