#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "analysis/analysis.hpp"
#include "cli/adaptive_flags.hpp"
#include "cli/job_flags.hpp"
#include "experiment/sweep_resume.hpp"
#include "plan/plan.hpp"
#include "sim/simulation.hpp"

// `wattwise sweep`'s flags as given, shared by the one-node sweep (sweep_command.cpp) and the multi-node
// sweep (sweep_slurm.cpp), which differ in how a run is launched and nothing else.
namespace wattwise::cli {

inline const JobCommand kSweepJob{
    "sweep", "`wattwise sweep [knobs] -- CMD ARGS`", true,
    "simulated job: mark only the first N iterations of each epoch (default 8)"};

struct SweepFlags : JobFlags {
  // Absent: the knob is not swept. Given (even as ""), it must be valid.
  std::optional<std::string> power_limit, sm_clock, mem_clock;
  std::vector<std::string> params;
  unsigned repeat = 1;
  std::string order = "ascending";
  std::uint64_t seed = 1;
  unsigned warmup_runs = 0;
  std::string cooldown;  // "" with the flag given: the default maximum
  CLI::Option* cooldown_option = nullptr;
  std::string reference;
  std::string db;
  bool resume = false;
  bool allow_mixed_results = false;
  bool dry_run = false;
  bool no_daemon = false;  // refuse the settings daemon (not root: a one-line error instead)
  unsigned max_failures = 3;
  std::optional<std::string> gpus;  // absent: CUDA_VISIBLE_DEVICES if set, else all
  std::string other_gpus = "omit";
  std::string interval_ms = "20";  // parsed by parse_duration, like every duration flag
  CLI::Option* interval_option = nullptr;
  std::optional<std::string> timeout_s;  // absent: no time-out
  std::string trace_dir;
  std::optional<std::string> job_gpus;  // may name a job knob: "{gpus}"
  std::string energy_scope;             // --energy-scope job|node; empty: node where the GPU count varies
  std::optional<std::string> max_slowdown;  // --max-slowdown 10%|none; absent: analyze's default headline
  bool read_only = false;
  // `--slurm`: each run an srun step with one agent per node (docs/slurm.md "Multi-node sweeps").
  bool slurm = false;
  std::optional<std::string> nodes;    // --nodes LIST: the job knob `nodes` (srun --nodes)
  std::vector<std::string> srun_args;  // --srun-arg, each added to every run's srun
  AdaptiveFlags adaptive;
  CLI::App* app = nullptr;  // to tell options given on the command line from stored ones (--resume)
  bool cooldown_from_db = false;
  bool interval_from_db = false;
};

// At most this long a cool-down waits after each run with `--cooldown` alone, s.
inline constexpr double kDefaultCooldownMaxS = 60;

// Registers the flags on `app` (the sweep subcommand) to fill `flags`.
void add_sweep_flags(CLI::App& app, SweepFlags& flags);

// The plan from the knob flags; `system` is asked only for `supported` clocks (never in a multi-node sweep).
plan::PlanSpec plan_spec(const SweepFlags& flags, hw::GpuSystem& system, std::size_t first_gpu);
// wattwise-sweep-<UTC time>.db
std::string default_db_path();
// The options `sweep --resume --db X` alone takes from X, as given (experiment/sweep_resume.hpp).
experiment::StoredSweepOptions stored_options(const SweepFlags& flags);
// `sweep --resume --db X` alone: fills `flags` from the sweep stored in X (options given on the command line
// win, e.g. a new --max-failures) and returns the stored plan JSON.
nlohmann::json load_stored_sweep(SweepFlags& flags);
// What print_analysis leaves for the sweep's last lines.
struct SweepAnalysis {
  std::map<std::string, double> recommended;  // each metric's recommended value of `knob`, by metric name
  std::string headline;  // report::headline_text: the sweep's closing lines (empty without an analysis)
};

// Prints analyze's table of the sweep's runs (its default metrics and any of `metrics`, an adaptive sweep's,
// not among them; every recommendation and the headline within `max_slowdown`, as analyze --max-slowdown) and returns each metric's recommended value of `knob`, for the adaptive summary, and the
// headline, which the sweep prints last.
SweepAnalysis print_analysis(const std::string& db, const std::optional<analysis::Setting>& reference,
                             const FootprintRates& rates,
                             const std::optional<analysis::EnergyScope>& energy_scope,
                             const std::vector<analysis::MetricSpec>& metrics = {},
                             const std::string& knob = "",
                             const std::optional<std::string>& max_slowdown = std::nullopt);

// `sweep --slurm`: checks the flags a multi-node sweep cannot take, runs the plan through srun and prints
// the analysis. `stored_plan`: null, or the plan of `--resume --db X` alone.
int run_multi_node_sweep(const SweepFlags& flags, const nlohmann::json& stored_plan);

}  // namespace wattwise::cli
