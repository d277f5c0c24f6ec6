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
#include "cli/commands.hpp"
#include "cli/flag_values.hpp"
#include "cli/footprint_flags.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/gpu_system.hpp"
#include "cli/node_flags.hpp"
#include "cli/nvtx_flags.hpp"
#include "cli/settings_path.hpp"
#include "cli/sweep_flags.hpp"
#include "core/error.hpp"
#include "experiment/multi_node_run.hpp"
#include "experiment/replay_table.hpp"
#include "experiment/runner.hpp"
#include "experiment/simulated_runs.hpp"
#include "measure/session.hpp"
#include "measure/simulated_session.hpp"
#include "plan/validate.hpp"
#include "report/analysis_report.hpp"
#include "report/footprint_report.hpp"
#include "report/trace_csv.hpp"
#include "safety/dry_run.hpp"
#include "safety/read_only_gpu.hpp"
#include "safety/settings_guard.hpp"
#include "safety/state_dir.hpp"
#include "sampling/sampler_config.hpp"
#include "sim/simulation.hpp"
#include "store/analysis_runs.hpp"
#include "store/durable_file.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::cli {

namespace {

constexpr double kDefaultCooldownMaxS = 60;
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

std::string default_db_path() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return fmt::format("wattwise-sweep-{}.db", stamp);
}

plan::PlanSpec plan_spec(const SweepFlags& flags, hw::GpuSystem& system, std::size_t first_gpu) {
  plan::PlanSpec spec;
  if (flags.power_limit) spec.knobs.push_back(plan::parse_power_limit_knob(*flags.power_limit));
  if (flags.sm_clock) {
    auto knob = plan::parse_clock_knob(plan::kSmClockKnob, *flags.sm_clock);
    if (knob.from_supported_clocks) {
      hw::Gpu& gpu = system.gpu(first_gpu);
      const auto mems = gpu.supported_mem_clocks_mhz();
      if (mems.empty())
        throw usage_error("--sm-clock supported: the GPU lists no supported clocks; give values");
      knob = plan::resolve_supported_clocks(knob, gpu.supported_sm_clocks_mhz(mems.front()));
    }
    spec.knobs.push_back(knob);
  }
  if (flags.mem_clock) {
    auto knob = plan::parse_clock_knob(plan::kMemClockKnob, *flags.mem_clock);
    if (knob.from_supported_clocks)
      knob = plan::resolve_supported_clocks(knob, system.gpu(first_gpu).supported_mem_clocks_mhz());
    spec.knobs.push_back(knob);
  }
  for (const auto& p : flags.params) spec.knobs.push_back(plan::parse_job_knob(p));
  if (flags.repeat == 0) throw usage_error("--repeat must be at least 1");
  spec.repeats = flags.repeat;
  spec.order = plan::parse_run_order(flags.order);
  spec.seed = flags.seed;
  spec.warmup_runs = flags.warmup_runs;
  return spec;
}

namespace {

// The setting the analysis compares against: --reference, else the GPU's default power limit when the
// power limit is swept, with every job knob at the first value the user listed (batch=64,128,256 compares
// against 64). Clocks have no default value to name (unlocked is not a number): then the analysis chooses by
// its own rule or asks for --reference, rather than fail on a reference that is not there.
std::optional<analysis::Setting> reference_setting(const SweepFlags& flags, const plan::PlanSpec& spec,
                                                   hw::GpuSystem& system, std::size_t first_gpu) {
  if (!flags.reference.empty()) return analysis::parse_setting_spec(flags.reference);
  analysis::Setting reference;
  for (const auto& knob : spec.knobs) {
    if (knob.values.empty()) return std::nullopt;
    if (knob.name == plan::kPowerLimitKnob) {
      const auto limits = system.gpu(first_gpu).power_limits();
      if (!limits) return std::nullopt;
      const bool swept = std::any_of(knob.values.begin(), knob.values.end(), [&](const std::string& v) {
        return std::abs(plan::knob_number(knob.name, v) - limits->default_w) < 1e-6;
      });
      if (!swept) return std::nullopt;
      reference[knob.name] = limits->default_w;
    } else if (knob.kind == plan::KnobKind::kJob) {
      try {
        reference[knob.name] = plan::knob_number(knob.name, knob.values.front());
      } catch (const Error&) {
        return std::nullopt;  // a non-numeric job knob cannot be analysed as a number anyway
      }
    } else {
      return std::nullopt;
    }
  }
  if (reference.empty()) return std::nullopt;
  return reference;
}

std::string trace_rows_of_gpu(const std::string& csv, unsigned gpu_index) {
  std::istringstream in(csv);
  std::string out, line;
  const std::string wanted = std::to_string(gpu_index);
  while (std::getline(in, line)) {
    const auto first = line.find(',');
    const auto second = line.find(',', first + 1);
    const bool data_row = !line.empty() && line[0] != '#' && line.rfind("time_s,", 0) != 0;
    if (!data_row || (first != std::string::npos && line.substr(first + 1, second - first - 1) == wanted))
      out += line + "\n";
  }
  return out;
}

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
    for (const auto& gpu : m.gpus)
      record.traces.push_back({gpu.index, trace_rows_of_gpu(trace.str(), gpu.index)});
  };
}

// A stored option as the text the flag would have been given: absent for null, numbers (older stores) as
// their text, so that every value goes through the flag's own parser again.
std::optional<std::string> stored_text(const nlohmann::json& options, const char* name) {
  if (!options.contains(name) || options.at(name).is_null()) return std::nullopt;
  const auto& value = options.at(name);
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

// What `sweep --resume --db X` alone needs besides the plan and the command: the other options as given.
}  // namespace

nlohmann::json sweep_options_json(const SweepFlags& flags) {
  nlohmann::json json = {
      {"gpus", flags.gpus ? nlohmann::json(*flags.gpus) : nlohmann::json()},
      {"other_gpus", flags.other_gpus},
      {"timeout_s", flags.timeout_s ? nlohmann::json(*flags.timeout_s) : nlohmann::json()},
      {"trace_dir",
       flags.trace_dir.empty() ? std::string() : std::filesystem::absolute(flags.trace_dir).string()},
      {"job_gpus", flags.job_gpus ? nlohmann::json(*flags.job_gpus) : nlohmann::json()},
      {"energy_scope", flags.energy_scope.empty() ? nlohmann::json() : nlohmann::json(flags.energy_scope)},
      {"max_failures", flags.max_failures},
      {"read_only", flags.read_only},
      {"simulate", flags.simulate}};
  if (flags.slurm) {  // absent for a one-node sweep, as in databases written before --slurm
    json["slurm"] = true;
    json["srun_args"] = flags.srun_args;
  }
  json.update(node_flags_json(flags.node));  // the node-power flags, at the top level like the others
  if (flags.adaptive.enabled) json["adaptive"] = adaptive_flags_json(flags.adaptive);
  if (flags.nvtx.enabled) json["nvtx"] = {{"domains", flags.nvtx.domains}};  // absent without --nvtx
  if (flags.interval_option->count() > 0 || flags.interval_from_db) json["interval_ms"] = flags.interval_ms;
  if (flags.cooldown_option->count() > 0 || flags.cooldown_from_db) json["cooldown"] = flags.cooldown;
  if (!flags.simulate.empty()) {
    nlohmann::json sim = {{"gpus", flags.sim.gpus}, {"epochs", flags.sim.epochs}};
    if (flags.sim.batch) sim["batch"] = *flags.sim.batch;
    if (flags.sim.samples_per_epoch) sim["samples"] = *flags.sim.samples_per_epoch;
    if (flags.sim.iteration_markers_per_epoch)
      sim["iteration_markers"] = *flags.sim.iteration_markers_per_epoch;
    json["sim"] = sim;
  }
  return json;
}

namespace {

// `sweep --resume --db X` with no knobs and no command takes the plan, the command and the options from X.
bool plan_from_database(const SweepFlags& flags) {
  return flags.resume && !flags.power_limit && !flags.sm_clock && !flags.mem_clock && flags.params.empty() &&
         flags.command.empty() && flags.simulate.empty();
}

// Fills `flags` from the database's stored sweep (options given on the command line win, e.g. a new
// --max-failures) and returns the stored plan JSON.
nlohmann::json load_stored_sweep(SweepFlags& flags) {
  if (flags.db.empty())
    throw usage_error("--resume with no knobs and no command continues the sweep in --db: give --db FILE");
  const auto stored = store::ResultsStore::open_read_only(flags.db);
  const nlohmann::json plan_json = stored.plan();
  nlohmann::json options = nlohmann::json::object();
  nlohmann::json argv = nlohmann::json::array();
  try {
    if (!stored.meta("sweep_json").empty()) options = nlohmann::json::parse(stored.meta("sweep_json"));
    if (!stored.meta("command_json").empty()) argv = nlohmann::json::parse(stored.meta("command_json"));
    if (options.empty()) {
      throw usage_error(fmt::format(
          "{} was written by an older wattwise that did not store its options: give the knobs and the "
          "command again with --resume",
          flags.db));
    }
    const auto given = [&](const char* name) { return flags.app != nullptr && flags.app->count(name) > 0; };
    flags.command = argv.get<std::vector<std::string>>();
    flags.simulate = options.value("simulate", std::string());
    // A null "gpus" (none given): CUDA_VISIBLE_DEVICES is read again, as the resumed job will read it.
    if (!given("--gpus")) flags.gpus = stored_text(options, "gpus");
    if (!given("--other-gpus")) flags.other_gpus = options.value("other_gpus", flags.other_gpus);
    if (!given("--timeout")) flags.timeout_s = stored_text(options, "timeout_s");
    if (!given("--trace-dir")) flags.trace_dir = options.value("trace_dir", std::string());
    if (!given("--job-gpus")) flags.job_gpus = stored_text(options, "job_gpus");
    if (!given("--energy-scope")) flags.energy_scope = stored_text(options, "energy_scope").value_or("");
    if (!given("--max-failures")) flags.max_failures = options.value("max_failures", flags.max_failures);
    if (!given("--read-only")) flags.read_only = options.value("read_only", false);
    if (!given("--slurm")) flags.slurm = options.value("slurm", false);
    if (!given("--srun-arg")) flags.srun_args = options.value("srun_args", std::vector<std::string>{});
    node_flags_from_json(options, flags.node, given);
    // The resumed runs hear the job's NVTX ranges as the first ones did (their phases judge the runs).
    if (!given("--nvtx") && options.contains("nvtx") && options.at("nvtx").is_object()) {
      flags.nvtx.enabled = true;
      if (!given("--nvtx-domains")) flags.nvtx.domains = options.at("nvtx").value("domains", std::string());
    }
    read_adaptive_flags(options, flags.adaptive, *flags.app);
    if (!given("--interval") && options.contains("interval_ms")) {
      flags.interval_ms = *stored_text(options, "interval_ms");
      flags.interval_from_db = true;
    }
    if (!given("--cooldown") && options.contains("cooldown")) {
      flags.cooldown = options.at("cooldown").get<std::string>();
      flags.cooldown_from_db = true;
    }
    if (options.contains("sim")) {
      const auto& sim = options.at("sim");
      flags.sim.gpus = sim.value("gpus", flags.sim.gpus);
      flags.sim.epochs = sim.value("epochs", flags.sim.epochs);
      if (sim.contains("batch")) flags.sim.batch = sim.at("batch").get<unsigned>();
      if (sim.contains("samples")) flags.sim.samples_per_epoch = sim.at("samples").get<std::int64_t>();
      if (sim.contains("iteration_markers"))
        flags.sim.iteration_markers_per_epoch = sim.at("iteration_markers").get<std::int64_t>();
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw data_error(
        fmt::format("{}: the stored sweep options are not readable ({}): give the knobs and the "
                    "command again with --resume",
                    flags.db, e.what()));
  }
  const plan::PlanSpec spec = plan::plan_spec_from_json(plan_json);
  flags.seed = spec.seed;
  flags.sim.seed = spec.seed;
  return plan_json;
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
                             const std::vector<analysis::MetricSpec>& metrics, const std::string& knob) {
  SweepAnalysis result;
  auto& recommended = result.recommended;
  try {
    const auto stored = store::read_analysis_runs(store::ResultsStore::open_read_only(db));
    analysis::AnalysisOptions options;
    options.default_setting = reference;
    options.energy_scope = energy_scope;
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
    hw::Gpu& gpu = system.gpu(index);
    plan::SupportedClocks clocks;
    clocks.gpu = fmt::format("GPU {} ({})", gpu.identity().index, gpu.identity().uuid);
    clocks.mem_mhz = gpu.supported_mem_clocks_mhz();
    for (unsigned mem : clocks.mem_mhz)
      for (unsigned sm : gpu.supported_sm_clocks_mhz(mem)) clocks.sm_mhz.push_back(sm);
    plan::check_clocks(plan, clocks);
  }
  if (!flags.trace_dir.empty() && !flags.dry_run) check_trace_dir(flags.trace_dir);
  if (flags.adaptive.enabled) adaptive_config(flags.adaptive, plan, std::nullopt, flags.seed);
}

// A private state directory for a simulated sweep: its journal and locks name simulated GPUs, which must
// never show up as a stale journal of the real ones.
class PrivateStateDir {
 public:
  PrivateStateDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "wattwise-sim-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw environment_error("cannot create a temporary directory: set TMPDIR");
    path_ = pattern;
  }
  ~PrivateStateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

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
  if (!simulated && flags.command.empty())
    throw usage_error("no command to sweep: `wattwise sweep [knobs] -- CMD ARGS`, or --simulate GPU:MODEL");
  if (simulated && !flags.command.empty())
    throw usage_error("--simulate runs a simulated job: give no command after `--`");
  if (!flags.slurm && (flags.nodes || !flags.srun_args.empty()))
    throw usage_error("--nodes and --srun-arg are for a multi-node sweep: add --slurm (docs/slurm.md)");
  if (flags.slurm) return run_multi_node_sweep(flags, stored_plan);
  if (const unsigned repeats = adaptive_plan_repeats(flags.adaptive, *flags.app)) flags.repeat = repeats;
  const FootprintRates rates = footprint_rates(flags.footprint);  // before any GPU is touched

  std::optional<sim::Simulation> simulation;
  std::unique_ptr<hw::GpuSystem> real;
  if (simulated) {
    if (!flags.sim.iteration_markers_per_epoch)
      flags.sim.iteration_markers_per_epoch = kSimulatedIterationMarkers;
    simulation.emplace(sim::make_simulation(flags.simulate, flags.sim, experiment::read_replay_table));
  } else {
    real = open_real_gpus(OfferSimulate::kYes);
  }
  hw::GpuSystem& raw_system = simulated ? static_cast<hw::GpuSystem&>(*simulation->system) : *real;
  std::optional<safety::ReadOnlyGpuSystem> read_only;
  if (flags.read_only) read_only.emplace(raw_system);
  hw::GpuSystem& system = read_only ? static_cast<hw::GpuSystem&>(*read_only) : raw_system;

  experiment::SweepOptions options;
  // The job's GPUs are set and measured; with --other-gpus report the others are measured too, never set.
  measure::JobGpuSelection selection =
      measure::select_job_gpus(system, job_gpu_request(system, flags.gpus, flags.other_gpus, simulated));
  for (const auto& warning : selection.warnings) std::cerr << "wattwise: " << warning << "\n";
  options.gpu_indices.assign(selection.positions.begin(),
                             selection.positions.begin() + static_cast<long>(selection.job_gpu_count));
  options.plan = plan::make_plan(stored_plan.is_null() ? plan_spec(flags, system, options.gpu_indices.front())
                                                       : plan::plan_spec_from_json(stored_plan));
  if (flags.read_only && !plan::hardware_settings_of(options.plan).empty()) {
    for (const auto& s : plan::hardware_settings_of(options.plan))
      if (!s.empty())
        throw usage_error(
            "--read-only sweeps job knobs only: drop --power-limit, --sm-clock and --mem-clock");
  }
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
    safety::validate_hardware_settings(system, options.gpu_indices, plan::hardware_settings_of(options.plan));
    std::cout << safety::describe_dry_run(system, options.gpu_indices, options.plan);
    return 0;
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
    reference = reference_setting(flags, options.plan.spec, system, options.gpu_indices.front());
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
  options.meta.sweep_options = sweep_options_json(flags);
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
  std::optional<PrivateStateDir> private_state;
  if (simulated) {
    private_state.emplace();
    options.state_dir = private_state->path();
    options.settings_access =
        std::make_shared<safety::LocalSettingsAccess>(options.state_dir, safety::WatchdogLaunch{}, "simulated");
  } else {
    options.state_dir = safety::state_dir();
    options.watchdog = safety::WatchdogLaunch::exec_self();
    // Root, the daemon, or a one-line refusal before the database is created or a job runs.
    const auto settings = plan::hardware_settings_of(options.plan);
    if (std::any_of(settings.begin(), settings.end(), [](const auto& s) { return !s.empty(); }))
      options.settings_access = settings_access_for(flags.no_daemon);
  }
  experiment::Progress progress = experiment::Progress::for_stderr();
  progress.name_database(options.db_path.string());
  options.progress = &progress;
  std::function<std::string(const std::map<std::string, double>&)> adaptive_summary;
  std::optional<experiment::AdaptiveConfig> adaptive;
  if (flags.adaptive.enabled) {
    adaptive = adaptive_config(flags.adaptive, options.plan, reference, flags.seed);
    adaptive_summary = wire_adaptive_sweep(*adaptive, options);
  }

  experiment::MeasureRunFn measure_run;
  std::unique_ptr<Clock> monotonic;
  Clock* clock = nullptr;
  if (simulated) {
    clock = simulation->clock.get();
    measure_run = experiment::simulated_measure_run(*simulation, measure_options, flags.seed);
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
                                         adaptive->metrics, adaptive->knob)
                        : print_analysis(options.db_path.string(), reference, rates, energy_scope);
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
  flags->app = &app;
  app.add_option("--power-limit", flags->power_limit,
                 "power limits, W: a range 150:300:5 or a list 150,200,250");
  app.add_option("--sm-clock", flags->sm_clock, "locked SM clocks, MHz: a range, a list, or `supported`");
  app.add_option("--mem-clock", flags->mem_clock,
                 "locked memory clocks, MHz: a range, a list, or `supported`");
  app.add_option("--param", flags->params,
                 "a job knob, name=v1,v2 or name=lo:hi:step; {name} in the command and "
                 "WATTWISE_PARAM_NAME get the value (repeatable)");
  app.add_option("--repeat", flags->repeat, "runs of each setting")->capture_default_str();
  app.add_option("--order", flags->order, "random, ascending or descending")->capture_default_str();
  app.add_option("--seed", flags->seed, "seed of the random order (and of the simulated job's noise)")
      ->capture_default_str();
  app.add_option("--warmup-runs", flags->warmup_runs, "runs before the plan, stored but not analysed");
  flags->cooldown_option =
      app.add_option(
             "--cooldown", flags->cooldown,
             "after each run wait until power is within 5% of idle and temperature changed < 1 C over "
             "5 s, at most MAX_S seconds, 0 to 86400 (default 60)")
          ->expected(0, 1)
          // `--cooldown` alone: the default; `--cooldown ''` stays '' and is refused.
          ->default_str(fmt::format("{}", kDefaultCooldownMaxS));
  app.add_option("--reference", flags->reference,
                 "the reference setting of the analysis, e.g. power_limit_w=300");
  app.add_option("--db", flags->db, "results database (default wattwise-sweep-<UTC time>.db)");
  app.add_flag("--resume", flags->resume,
               "continue the sweep in --db: runs not stored and failed runs; with no knobs and no command, "
               "the plan, command and options stored in --db");
  app.add_flag("--allow-mixed-results", flags->allow_mixed_results,
               "with --resume: accept a job command or GPUs other than the stored ones (recorded in the "
               "database)");
  app.add_flag("--dry-run", flags->dry_run, "print the plan and every change it would make; touch nothing");
  app.add_flag("--no-daemon", flags->no_daemon, kNoDaemonHelp);
  app.add_option("--max-failures", flags->max_failures, "stop after this many failed runs (0: never)")
      ->capture_default_str();
  app.add_option(
      "--gpus", flags->gpus,
      "GPUs to set and measure, all the job's: indices or UUIDs, comma separated, or all (default: "
      "those CUDA_VISIBLE_DEVICES names if it is set, else all)");
  app.add_option(
         "--other-gpus", flags->other_gpus,
         "GPUs outside CUDA_VISIBLE_DEVICES: omit (default: on a shared node they are other jobs', "
         "and reading them costs CPU) or report (measured, never set, shown apart, never in the job's "
         "energy)")
      ->capture_default_str();
  flags->interval_option =
      app.add_option("--interval", flags->interval_ms,
                     "period of power and telemetry readings, ms, 1 to 10000 (default 20; simulated: 100)");
  app.add_option("--timeout", flags->timeout_s,
                 "stop a run's job after this many seconds, 0.001 to 31622400 (the run fails)");
  app.add_option(
      "--job-gpus", flags->job_gpus,
      "the job uses the first N measured GPUs (e.g. {gpus} for a job knob); the rest are reported idle");
  app.add_option(
      "--energy-scope", flags->energy_scope,
      "judge runs on the energy of the job's GPUs (job) or of the node: every measured GPU, idle ones "
      "included, + CPU/DRAM or a meter (node); default: node where --job-gpus varies the GPU count");
  app.add_option("--trace-dir", flags->trace_dir, "keep every run's trace as CSV here (and in the database)");
  app.add_flag("--read-only", flags->read_only,
               "change no GPU setting (job knobs only): for shared machines; every control call is refused");
  app.add_flag("--slurm", flags->slurm,
               "inside a SLURM allocation: run each run as an srun step with one wattwise agent per node, "
               "which sets, measures and restores its node's GPUs (docs/slurm.md)");
  app.add_option("--nodes", flags->nodes,
                 "with --slurm: node counts to sweep, e.g. 1,2,4 (the job knob `nodes`, srun --nodes; "
                 "default: every node of the allocation)");
  app.add_option("--srun-arg", flags->srun_args,
                 "with --slurm: an argument added to every run's srun, e.g. --srun-arg=--gpus-per-node=4 "
                 "(repeatable)");
  add_node_flags(app, flags->node);
  add_nvtx_flags(app, flags->nvtx);
  add_footprint_flags(app, flags->footprint);
  app.add_option("--simulate", flags->simulate,
                 "sweep a simulated job instead, e.g. v100:resnet50, or csv:PATH to replay a runs CSV or "
                 "sweep database");
  add_adaptive_flags(app, flags->adaptive);
  add_simulation_flags(app, flags->sim,
                       "simulated job: mark only the first N iterations of each epoch (default 8)");
  app.add_option("command", flags->command, "the job, after --")->expected(-1);
  return [flags]() {
    SweepFlags copy = *flags;
    copy.sim.seed = copy.seed;
    if (copy.nodes) copy.params.push_back(std::string(experiment::kNodesKnob) + "=" + *copy.nodes);
    return run_sweep_command(copy);
  };
}

}  // namespace wattwise::cli
