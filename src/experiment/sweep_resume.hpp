#pragma once

// The sweep's resume format: the options besides the plan and the command that `sweep --resume --db X` alone
// takes from X (meta `sweep_json`, docs/results-schema.md), written when the sweep starts and read back.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wattwise::experiment {

// Each option as the text its flag was given (numbers of older stores read as their text), so that every
// value goes through the flag's own parser again when the sweep resumes. Absent: the flag was not given.
struct StoredSweepOptions {
  std::optional<std::string> gpus;  // absent: CUDA_VISIBLE_DEVICES is read again, as the resumed job will
  std::string other_gpus = "omit";
  std::optional<std::string> timeout_s;
  std::string trace_dir;  // absolute; empty: none
  std::optional<std::string> job_gpus;
  std::optional<std::string> energy_scope;
  std::optional<std::string> max_slowdown;  // --max-slowdown as given ("10%", "none")
  unsigned max_failures = 3;
  bool read_only = false;
  std::string simulate;  // empty: a real job
  // `sweep --slurm` (absent from a one-node sweep's options, as in databases written before --slurm).
  bool slurm = false;
  std::vector<std::string> srun_args;
  // The node-power flags (docs/node-power.md).
  std::optional<std::string> meter_cmd, meter_timeout_s, node_interval_ms;
  bool no_powercap = false;
  struct Adaptive {
    std::optional<std::string> budget, precision;
    std::vector<std::string> metrics;
  };
  std::optional<Adaptive> adaptive;         // absent: not an adaptive sweep
  std::optional<std::string> nvtx_domains;  // absent: no --nvtx
  std::optional<std::string> interval_ms;   // absent: the default period
  std::optional<std::string> cooldown;      // absent: no cool-down; "": the default maximum
  // The simulated job (with --simulate): what is absent keeps the command line's value.
  struct Simulation {
    std::optional<std::size_t> gpus;
    std::optional<int> epochs;
    std::optional<unsigned> batch;
    std::optional<std::int64_t> samples_per_epoch, iteration_markers_per_epoch;
  };
  std::optional<Simulation> sim;
};

nlohmann::json sweep_options_json(const StoredSweepOptions& options);
// Throws nlohmann::json's exceptions for a value of the wrong type (load_stored_sweep turns them into one
// data error).
StoredSweepOptions sweep_options_from_json(const nlohmann::json& json);

// What `sweep --resume --db X` alone continues: the stored plan (as plan::plan_spec_to_json wrote it, with
// its "reference"), the job's command and the options.
struct StoredSweep {
  nlohmann::json plan;
  std::vector<std::string> command;
  StoredSweepOptions options;
};

// Reads the sweep stored in `db`: a usage error for a database written by a wattwise that did not store
// its options, a data error (naming the database and what to do) for options that are not readable.
StoredSweep load_stored_sweep(const std::filesystem::path& db);

}  // namespace wattwise::experiment
