#include <csignal>
#include <cstdio>
#include <exception>
#include <map>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "wattwise: measure the energy of GPU jobs and find the settings that trade it best against time"};
  app.set_version_flag("--version", std::string("wattwise ") + wattwise::kVersion);
  app.require_subcommand(1);

  std::map<CLI::App*, wattwise::cli::CommandRun> commands;
  auto add = [&](const char* name, const char* help, auto adder) {
    CLI::App* sub = app.add_subcommand(name, help);
    commands[sub] = adder(*sub);
  };
  add("info", "GPUs, capabilities, limits, clocks, permissions (reads only)",
      wattwise::cli::add_info_command);
  add("measure", "run a command and report its time and energy per GPU and phase",
      wattwise::cli::add_measure_command);
  add("analyze", "metrics, Pareto front and recommendations from a sweep database or a runs CSV",
      wattwise::cli::add_analyze_command);
  add("sweep", "run a job over a plan of GPU and job settings, store every run, and analyse them",
      wattwise::cli::add_sweep_command);
  add("report", "tables and charts of a sweep database or a measured trace (HTML, Markdown, CSV)",
      wattwise::cli::add_report_command);
  add("exporter", "serve the GPUs' energy, power, clocks and per-job energy to Prometheus (a node agent)",
      wattwise::cli::add_exporter_command);
  add("restore", "put back GPU settings from a stale journal (wattwise was killed, or the power failed)",
      wattwise::cli::add_restore_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(
        stderr, "wattwise: %s (see `wattwise %s--help`)\n", e.what(),
        app.get_subcommands().empty() ? "" : (app.get_subcommands().front()->get_name() + " ").c_str());
    return static_cast<int>(wattwise::ErrorKind::kUsage);
  }

  // Every command warns about GPU settings a killed wattwise left behind (restore reports them itself).
  if (app.get_subcommands().front()->get_name() != "restore") {
    try {
      if (auto warning = wattwise::safety::check_stale_journal(wattwise::safety::state_dir()))
        std::fprintf(stderr, "wattwise: warning: %s\n", warning->c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "wattwise: warning: cannot check for a stale settings journal: %s\n", e.what());
    }
  }

  try {
    for (auto* sub : app.get_subcommands()) return commands.at(sub)();
  } catch (const wattwise::Error& e) {
    std::fprintf(stderr, "wattwise: %s\n", wattwise::for_terminal(e.what()).c_str());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattwise: internal error: %s (please report it)\n",
                 wattwise::for_terminal(e.what()).c_str());
    return static_cast<int>(wattwise::ErrorKind::kInternal);
  }
  return 0;
}
