#include "cli/job_flags.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::cli {

void add_job_flags(CLI::App& app, JobFlags& flags, const JobCommand& command) {
  if (command.node_and_simulation_flags) add_node_flags(app, flags.node);
  add_nvtx_flags(app, flags.nvtx);
  add_footprint_flags(app, flags.footprint);
  CLI::Option* simulate = app.add_option(
      "--simulate", flags.simulate,
      fmt::format("{} a simulated job instead, e.g. v100:resnet50, or csv:PATH to replay a runs CSV or sweep "
                  "database",
                  command.verb));
  if (command.node_and_simulation_flags) {
    // Without --simulate they would be taken silently from a real job's command line: refused instead.
    auto& sim = flags.sim;
    app.add_option("--batch", sim.batch, "simulated job: batch size")->needs(simulate);
    app.add_option("--samples", sim.samples_per_epoch, "simulated job: samples per epoch")->needs(simulate);
    app.add_option("--epochs", sim.epochs, "simulated job: epochs")->needs(simulate);
    app.add_option("--sim-gpus", sim.gpus, "simulated job: number of GPUs")
        ->capture_default_str()
        ->needs(simulate);
    app.add_option("--iteration-markers", sim.iteration_markers_per_epoch, command.iteration_markers_help)
        ->needs(simulate);
  }
  app.add_option("command", flags.command, "the job, after --")->expected(-1);
}

void check_job(const JobFlags& flags, const JobCommand& command) {
  if (flags.simulate.empty() && flags.command.empty())
    throw usage_error(
        fmt::format("no command to {}: {}, or --simulate GPU:MODEL", command.verb, command.usage));
  if (!flags.simulate.empty() && !flags.command.empty())
    throw usage_error("--simulate runs a simulated job: give no command after `--`");
}

}  // namespace wattwise::cli
