#pragma once

// The flags of the job a command runs, the same for `measure`, `sweep` and `tune`: the command after `--`
// or a simulated job (--simulate and its --batch, --samples, ...), the node-power flags, NVTX ranges as
// phases and the footprint rates. One struct, filled by one add_job_flags; each command's flags derive from
// it.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/footprint_flags.hpp"
#include "cli/node_flags.hpp"
#include "cli/nvtx_flags.hpp"
#include "sim/simulation.hpp"

namespace wattwise::cli {

struct JobFlags {
  std::string simulate;        // GPU:MODEL or csv:PATH; empty: the command's job
  sim::SimulationOptions sim;  // the simulated job (measure, sweep)
  NodeFlags node;              // measure, sweep
  NvtxFlags nvtx;
  FootprintFlagValues footprint;
  std::vector<std::string> command;
};

// What differs between the commands: the verb of their help and errors, their usage line, and whether they
// take the node-power flags and the simulated job's own flags (tune simulates through its own model).
struct JobCommand {
  const char* verb;   // "measure": "measure a simulated job instead", "no command to measure"
  const char* usage;  // "`wattwise measure -- CMD ARGS`"
  bool node_and_simulation_flags = true;
  const char* iteration_markers_help = "simulated job: mark only the first N iterations of each epoch";
};

void add_job_flags(CLI::App& app, JobFlags& flags, const JobCommand& command);

// A command or --simulate, never both nor neither: usage errors that say what to give.
void check_job(const JobFlags& flags, const JobCommand& command);

}  // namespace wattwise::cli
