#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/simulation.hpp"

namespace wattwise::cli {

// Each command registers its flags on a CLI11 subcommand and returns the function that runs it
// (returning the process exit code). Parsing and wiring only: the logic lives in the modules.
using CommandRun = std::function<int()>;

// The flags of the simulated job that `measure` and `sweep` share (--batch, --samples, --epochs,
// --sim-gpus, --iteration-markers), each refused without --simulate (add that flag first);
// `iteration_markers_help` says what the command's default is.
void add_simulation_flags(CLI::App& app, sim::SimulationOptions& options,
                          const std::string& iteration_markers_help);

CommandRun add_info_command(CLI::App& app);
CommandRun add_measure_command(CLI::App& app);
CommandRun add_analyze_command(CLI::App& app);
CommandRun add_sweep_command(CLI::App& app);
CommandRun add_restore_command(CLI::App& app);
CommandRun add_report_command(CLI::App& app);
CommandRun add_merge_command(CLI::App& app);
CommandRun add_counter_command(CLI::App& app);
CommandRun add_tune_command(CLI::App& app);
CommandRun add_exporter_command(CLI::App& app);
CommandRun add_daemon_command(CLI::App& app);
CommandRun add_runs_command(CLI::App& app);

}  // namespace wattwise::cli
