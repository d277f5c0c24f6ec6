#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace wattwise::cli {

// Each command registers its flags on a CLI11 subcommand and returns the function that runs it
// (returning the process exit code). Parsing and wiring only: the logic lives in the modules.
using CommandRun = std::function<int()>;

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
