// `wattwise sweep`'s flags: their registration, and their way to and from the sweep's resume format
// (experiment/sweep_resume.hpp), where options given on the command line win over stored ones.
#include "cli/sweep_flags.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/settings_path.hpp"
#include "core/error.hpp"

namespace wattwise::cli {

void add_sweep_flags(CLI::App& app, SweepFlags& flags) {
  flags.app = &app;
  app.add_option("--power-limit", flags.power_limit,
                 "power limits, W: a range 150:300:5 or a list 150,200,250");
  app.add_option("--sm-clock", flags.sm_clock, "locked SM clocks, MHz: a range, a list, or `supported`");
  app.add_option("--mem-clock", flags.mem_clock,
                 "locked memory clocks, MHz: a range, a list, or `supported`");
  app.add_option("--param", flags.params,
                 "a job knob, name=v1,v2 or name=lo:hi:step; {name} in the command and "
                 "WATTWISE_PARAM_NAME get the value (repeatable)");
  app.add_option("--repeat", flags.repeat, "runs of each setting")->capture_default_str();
  app.add_option("--order", flags.order, "random, ascending or descending")->capture_default_str();
  app.add_option("--seed", flags.seed, "seed of the random order (and of the simulated job's noise)")
      ->capture_default_str();
  app.add_option("--warmup-runs", flags.warmup_runs, "runs before the plan, stored but not analysed");
  flags.cooldown_option =
      app.add_option(
             "--cooldown", flags.cooldown,
             "after each run wait until power is within 5% of idle and temperature changed < 1 C over "
             "5 s, at most MAX_S seconds, 0 to 86400 (default 60)")
          ->expected(0, 1)
          // `--cooldown` alone: the default; `--cooldown ''` stays '' and is refused.
          ->default_str(fmt::format("{}", kDefaultCooldownMaxS));
  app.add_option("--reference", flags.reference,
                 "the reference setting of the analysis, e.g. power_limit_w=300");
  app.add_option("--db", flags.db, "results database (default wattwise-sweep-<UTC time>.db)");
  app.add_flag("--resume", flags.resume,
               "continue the sweep in --db: runs not stored and failed runs; with no knobs and no command, "
               "the plan, command and options stored in --db");
  app.add_flag("--allow-mixed-results", flags.allow_mixed_results,
               "with --resume: accept a job command or GPUs other than the stored ones (recorded in the "
               "database)");
  app.add_flag("--dry-run", flags.dry_run, "print the plan and every change it would make; touch nothing");
  app.add_flag("--no-daemon", flags.no_daemon, kNoDaemonHelp);
  app.add_option("--max-failures", flags.max_failures, "stop after this many failed runs (0: never)")
      ->capture_default_str();
  app.add_option(
      "--gpus", flags.gpus,
      "GPUs to set and measure, all the job's: indices or UUIDs, comma separated, or all (default: "
      "those CUDA_VISIBLE_DEVICES names if it is set, else all)");
  app.add_option(
         "--other-gpus", flags.other_gpus,
         "GPUs outside CUDA_VISIBLE_DEVICES: omit (default: on a shared node they are other jobs', "
         "and reading them costs CPU) or report (measured, never set, shown apart, never in the job's "
         "energy)")
      ->capture_default_str();
  flags.interval_option =
      app.add_option("--interval", flags.interval_ms,
                     "period of power and telemetry readings, ms, 1 to 10000 (default 20; simulated: 100)");
  app.add_option("--timeout", flags.timeout_s,
                 "stop a run's job after this many seconds, 0.001 to 31622400 (the run fails)");
  app.add_option(
      "--job-gpus", flags.job_gpus,
      "the job uses the first N measured GPUs (e.g. {gpus} for a job knob); the rest are reported idle");
  app.add_option(
      "--energy-scope", flags.energy_scope,
      "judge runs on the energy of the job's GPUs (job) or of the node: every measured GPU, idle ones "
      "included, + CPU/DRAM or a meter (node); default: node where --job-gpus varies the GPU count");
  app.add_option("--max-slowdown", flags.max_slowdown,
                 "recommend only settings at most this much slower than the reference, e.g. 10% (as analyze); "
                 "with --adaptive the sweep also looks for each optimum within it; 'none' lifts the 10% the "
                 "closing headline keeps by default");
  app.add_option("--trace-dir", flags.trace_dir, "keep every run's trace as CSV here (and in the database)");
  app.add_flag("--read-only", flags.read_only,
               "change no GPU setting (job knobs only): for shared machines; every control call is refused");
  app.add_flag("--slurm", flags.slurm,
               "inside a SLURM allocation: run each run as an srun step with one wattwise agent per node, "
               "which sets, measures and restores its node's GPUs (docs/slurm.md)");
  app.add_option("--nodes", flags.nodes,
                 "with --slurm: node counts to sweep, e.g. 1,2,4 (the job knob `nodes`, srun --nodes; "
                 "default: every node of the allocation)");
  app.add_option("--srun-arg", flags.srun_args,
                 "with --slurm: an argument added to every run's srun, e.g. --srun-arg=--gpus-per-node=4 "
                 "(repeatable)");
  add_job_flags(app, flags, kSweepJob);
  add_adaptive_flags(app, flags.adaptive);
}

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
      hw::GpuReadings& gpu = system.gpu(first_gpu);
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

experiment::StoredSweepOptions stored_options(const SweepFlags& flags) {
  experiment::StoredSweepOptions o;
  o.gpus = flags.gpus;
  o.other_gpus = flags.other_gpus;
  o.timeout_s = flags.timeout_s;
  if (!flags.trace_dir.empty()) o.trace_dir = std::filesystem::absolute(flags.trace_dir).string();
  o.job_gpus = flags.job_gpus;
  if (!flags.energy_scope.empty()) o.energy_scope = flags.energy_scope;
  o.max_slowdown = flags.max_slowdown;
  o.max_failures = flags.max_failures;
  o.read_only = flags.read_only;
  o.simulate = flags.simulate;
  o.slurm = flags.slurm;
  o.srun_args = flags.srun_args;
  o.meter_cmd = flags.node.meter_cmd;
  o.meter_timeout_s = flags.node.meter_timeout_s;
  o.node_interval_ms = flags.node.node_interval_ms;
  o.no_powercap = flags.node.no_powercap;
  if (flags.adaptive.enabled)
    o.adaptive = {flags.adaptive.budget, flags.adaptive.precision, flags.adaptive.metrics};
  if (flags.nvtx.enabled) o.nvtx_domains = flags.nvtx.domains;
  if (flags.interval_option->count() > 0 || flags.interval_from_db) o.interval_ms = flags.interval_ms;
  if (flags.cooldown_option->count() > 0 || flags.cooldown_from_db) o.cooldown = flags.cooldown;
  if (!flags.simulate.empty())
    o.sim = {flags.sim.gpus, flags.sim.epochs, flags.sim.batch, flags.sim.samples_per_epoch,
             flags.sim.iteration_markers_per_epoch};
  return o;
}

nlohmann::json load_stored_sweep(SweepFlags& flags) {
  if (flags.db.empty())
    throw usage_error("--resume with no knobs and no command continues the sweep in --db: give --db FILE");
  const experiment::StoredSweep stored = experiment::load_stored_sweep(flags.db);
  const experiment::StoredSweepOptions& o = stored.options;
  const auto given = [&](const char* name) { return flags.app != nullptr && flags.app->count(name) > 0; };
  flags.command = stored.command;
  flags.simulate = o.simulate;
  if (!given("--gpus")) flags.gpus = o.gpus;
  if (!given("--other-gpus")) flags.other_gpus = o.other_gpus;
  if (!given("--timeout")) flags.timeout_s = o.timeout_s;
  if (!given("--trace-dir")) flags.trace_dir = o.trace_dir;
  if (!given("--job-gpus")) flags.job_gpus = o.job_gpus;
  if (!given("--energy-scope")) flags.energy_scope = o.energy_scope.value_or("");
  if (!given("--max-slowdown")) flags.max_slowdown = o.max_slowdown;
  if (!given("--max-failures")) flags.max_failures = o.max_failures;
  if (!given("--read-only")) flags.read_only = o.read_only;
  if (!given("--slurm")) flags.slurm = o.slurm;
  if (!given("--srun-arg")) flags.srun_args = o.srun_args;
  if (!given("--meter-cmd")) flags.node.meter_cmd = o.meter_cmd;
  if (!given("--meter-timeout")) flags.node.meter_timeout_s = o.meter_timeout_s;
  if (!given("--node-interval")) flags.node.node_interval_ms = o.node_interval_ms;
  if (!given("--no-powercap")) flags.node.no_powercap = o.no_powercap;
  // The resumed runs hear the job's NVTX ranges as the first ones did (their phases judge the runs).
  if (!given("--nvtx") && o.nvtx_domains) {
    flags.nvtx.enabled = true;
    if (!given("--nvtx-domains")) flags.nvtx.domains = *o.nvtx_domains;
  }
  if (o.adaptive) {
    flags.adaptive.enabled = true;
    if (!given("--budget") && o.adaptive->budget) flags.adaptive.budget = o.adaptive->budget;
    if (!given("--precision") && o.adaptive->precision) flags.adaptive.precision = o.adaptive->precision;
    if (!given("--metric")) flags.adaptive.metrics = o.adaptive->metrics;
  }
  if (!given("--interval") && o.interval_ms) {
    flags.interval_ms = *o.interval_ms;
    flags.interval_from_db = true;
  }
  if (!given("--cooldown") && o.cooldown) {
    flags.cooldown = *o.cooldown;
    flags.cooldown_from_db = true;
  }
  if (o.sim) {
    if (o.sim->gpus) flags.sim.gpus = *o.sim->gpus;
    if (o.sim->epochs) flags.sim.epochs = *o.sim->epochs;
    if (o.sim->batch) flags.sim.batch = o.sim->batch;
    if (o.sim->samples_per_epoch) flags.sim.samples_per_epoch = o.sim->samples_per_epoch;
    if (o.sim->iteration_markers_per_epoch)
      flags.sim.iteration_markers_per_epoch = o.sim->iteration_markers_per_epoch;
  }
  const plan::PlanSpec spec = plan::plan_spec_from_json(stored.plan);
  flags.seed = spec.seed;
  flags.sim.seed = spec.seed;
  return stored.plan;
}

}  // namespace wattwise::cli
