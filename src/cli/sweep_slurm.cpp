// `wattwise sweep --slurm`: the wiring of a multi-node sweep (experiment/multi_node_run.hpp). The sweep's
// host reads and sets no GPU: every run is an srun step whose per-node agents do, each under its own lock,
// journal and watchdog.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/reference.hpp"
#include "cli/flag_values.hpp"
#include "cli/sweep_flags.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "experiment/multi_node_run.hpp"
#include "experiment/runner.hpp"
#include "plan/validate.hpp"

namespace wattwise::cli {

namespace {

constexpr std::size_t kMaxNodes = 100'000;

// What a multi-node sweep cannot do: each is refused before anything runs, saying what to do instead.
void refuse_local_only_flags(const SweepFlags& flags) {
  const auto refuse = [](bool given, const char* flag, const char* why) {
    if (given) throw usage_error(fmt::format("{} cannot be used with --slurm: {}", flag, why));
  };
  refuse(!flags.simulate.empty(), "--simulate", "a simulated job runs on no cluster");
  refuse(flags.adaptive.enabled, "--adaptive", "adaptive multi-node sweeps are not built; list the values");
  refuse(flags.cooldown_option->count() > 0 || flags.cooldown_from_db, "--cooldown",
         "the sweep's host does not read the nodes' GPUs");
  refuse(!flags.trace_dir.empty(), "--trace-dir", "each node's agent measures; keep traces with measure");
  refuse(flags.job_gpus.has_value(), "--job-gpus", "give the node's GPUs to the job with --srun-arg");
  refuse(flags.node.meter_cmd.has_value(), "--meter-cmd", "a meter belongs to one node");
  refuse(flags.nvtx.enabled, "--nvtx",
         "the agents do not pass NVTX on yet; mark the job's phases with markers");
  refuse(flags.sm_clock == "supported" || flags.mem_clock == "supported", "`supported` clocks",
         "the sweep's host reads no GPU: list the clocks");
  refuse(flags.read_only && (flags.power_limit || flags.sm_clock || flags.mem_clock), "--read-only",
         "drop --power-limit, --sm-clock and --mem-clock (it sweeps job knobs only)");
  if (std::getenv("SLURM_JOB_ID") == nullptr)
    throw usage_error(
        "--slurm runs inside a SLURM allocation and SLURM_JOB_ID is not set: run it in an sbatch script "
        "or under `salloc -N<nodes> wattwise sweep --slurm ...`");
}

// The measure flags every node's agent gets: the sweep's own sampling, time-out and GPU choice.
std::vector<std::string> agent_args(const SweepFlags& flags) {
  std::vector<std::string> args;
  if (flags.gpus) args.insert(args.end(), {"--gpus", *flags.gpus});
  if (flags.other_gpus != "omit") args.insert(args.end(), {"--other-gpus", flags.other_gpus});
  if (flags.interval_option->count() > 0 || flags.interval_from_db)
    args.insert(args.end(), {"--interval", flags.interval_ms});
  if (flags.timeout_s) args.insert(args.end(), {"--timeout", *flags.timeout_s});
  if (flags.no_daemon) args.push_back("--no-daemon");  // each agent chooses root or the daemon itself
  return args;
}

// Everything about the plan that can be wrong, before the first step starts (the agents check their own
// GPUs' ranges and permissions before they change anything).
void validate_plan(const SweepFlags& flags, const plan::Plan& plan) {
  plan::check_placeholders(flags.command, plan.spec, "the command");
  plan::check_numeric_job_knobs(plan.spec);
  if (!flags.reference.empty())
    plan::check_reference(analysis::parse_setting_spec(flags.reference), plan.spec);
  for (const auto& run : plan.runs)
    if (const auto nodes = run.params.find(experiment::kNodesKnob); nodes != run.params.end())
      parse_count("--nodes", nodes->second, 1, kMaxNodes);
  // Checked as the agents will parse them, so a bad value fails here and not on every node.
  if (flags.interval_option->count() > 0 || flags.interval_from_db)
    parse_duration("--interval", flags.interval_ms, DurationUnit::kMilliseconds, kMinIntervalMs,
                   kMaxIntervalMs);
  if (flags.timeout_s)
    parse_duration("--timeout", *flags.timeout_s, DurationUnit::kSeconds, kMinTimeoutS, kMaxTimeoutS);
}

}  // namespace

int run_multi_node_sweep(const SweepFlags& flags, const nlohmann::json& stored_plan) {
  refuse_local_only_flags(flags);
  experiment::NoLocalGpus no_gpus;
  experiment::SweepOptions options;
  options.plan = plan::make_plan(stored_plan.is_null() ? plan_spec(flags, no_gpus, 0)
                                                       : plan::plan_spec_from_json(stored_plan));
  validate_plan(flags, options.plan);
  options.db_path = std::filesystem::absolute(flags.db.empty() ? default_db_path() : flags.db);

  experiment::MultiNodeOptions multi_node;
  multi_node.wattwise = std::filesystem::read_symlink("/proc/self/exe");
  multi_node.runs_dir = options.db_path.string() + ".nodes";
  multi_node.srun_args = flags.srun_args;
  multi_node.agent_args = agent_args(flags);
  multi_node.command = flags.command;
  if (flags.dry_run) {
    for (const auto& run : options.plan.runs)
      std::cout << fmt::format(
          "run {}: {}\n", run.index,
          fmt::join(experiment::srun_argv(multi_node, run,
                                          multi_node.runs_dir / fmt::format("run-{:04}", run.index)),
                    " "));
    return 0;
  }

  std::optional<analysis::Setting> reference;
  if (!flags.reference.empty()) reference = analysis::parse_setting_spec(flags.reference);
  options.plan_json = stored_plan.is_null() ? plan::plan_spec_to_json(options.plan.spec) : stored_plan;
  if (stored_plan.is_null() && reference) options.plan_json["reference"] = *reference;
  if (!stored_plan.is_null() && stored_plan.contains("reference"))
    reference = stored_plan.at("reference").get<analysis::Setting>();
  options.meta.command = fmt::format("{}", fmt::join(flags.command, " "));
  options.meta.command_argv = flags.command;
  options.meta.sweep_options = experiment::sweep_options_json(stored_options(flags));
  options.meta.measurement_method = "per run: see runs.method (each node's agent, merged)";
  options.resume = flags.resume;
  options.allow_mixed_results = flags.allow_mixed_results;
  options.max_failures = flags.max_failures;
  options.run_elsewhere = experiment::multi_node_runs(multi_node);
  experiment::Progress progress = experiment::Progress::for_stderr();
  options.progress = &progress;

  MonotonicClock clock;
  const auto measured_elsewhere = [](const plan::PlannedRun&) -> measure::Measurement {
    throw std::logic_error("a multi-node sweep measures on its nodes");
  };
  const experiment::SweepOutcome outcome = experiment::run_sweep(no_gpus, options, measured_elsewhere, clock);
  if (outcome.runs_done > 0 || outcome.runs_skipped > 0) {
    const SweepAnalysis analysed =
        print_analysis(options.db_path.string(), reference, footprint_rates(flags.footprint), std::nullopt, {},
                       "", flags.max_slowdown);
    std::cout << (analysed.headline.empty() ? "" : "\n" + analysed.headline);
  }
  std::cout << fmt::format("results: {} (each node's result: {})\n", options.db_path.string(),
                           multi_node.runs_dir.string());
  std::fprintf(stderr, "wattwise: %s\n", outcome.summary().c_str());
  return outcome.exit_code();
}

}  // namespace wattwise::cli
