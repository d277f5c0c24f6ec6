// HAZARD ZONE (stop signals). A mistake here leaves the job running after wattwise ends, or a GPU capped
// after Ctrl-C / SIGTERM. Before a change here lands, run test_workload, test_safety and `ctest -L faults`
// (Release build; docs/architecture.md "Hazard zones").

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/parse_error_line.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"
#include "workload/stop_signals.hpp"

namespace {

// Commands that run jobs or change settings keep the stop signals recorded from main's first line to
// their end (workload/stop_signals.hpp); the others get the default dispositions back once parsed.
bool runs_jobs(const std::string& command) {
  return command == "measure" || command == "sweep" || command == "tune";
}

// Options end at the job's command, as they do for `perf stat`, `nice` and `timeout`: the first word that is
// neither an option nor an option's value starts the command, and every word after it is the job's
// (`wattwise measure python train.py --batch 128` passes --batch 128 to train.py). Each occurrence of a
// repeatable option takes one value, so `--param batch=32,64 python ...` never takes `python` as a second.
void end_options_at_the_command(CLI::App& command) {
  command.positionals_at_end();
  for (CLI::Option* option : command.get_options())
    if (option->nonpositional()) option->allow_extra_args(false);
  command.get_option("command")->description(
      "the job and its own arguments, after wattwise's options (`--` before it is optional)");
}

}  // namespace

int main(int argc, char** argv) {
  // First: a SIGINT/SIGTERM/SIGHUP while the command line is parsed is recorded, and a sweep or measure
  // then stops before it starts with the usual line, instead of the default action killing wattwise
  // without a word (seen on a loaded machine: SIGHUP 8-60 ms after the start, exit 129, nothing said).
  // A signal ignored at the start stays ignored: nohup's SIGHUP, and all three in the settings watchdog
  // (`restore --watchdog`, started so by safety/watchdog.cpp: it must outlive slurmstepd's SIGTERM to
  // restore; recording one while it parsed once ended it before it restored, in CI).
  std::optional<wattwise::workload::StopSignals> stop_signals{std::in_place};
  // Whole lines on stdout as they are printed: where stdout and stderr share a file (SLURM's default
  // output), a "wattwise: ..." line on stderr then follows the table rows printed before it, never lands
  // in the middle of one or ahead of them (a file's stdout was flushed only at exit, 4 KiB at a time).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  CLI::App app{
      "wattwise: measure the energy of GPU jobs and find the settings that trade it best against time"};
  app.set_version_flag("--version", std::string("wattwise ") + wattwise::kVersion);
  app.require_subcommand(1);

  std::map<CLI::App*, wattwise::cli::CommandRun> commands;
  auto add = [&](const char* name, const char* help, auto adder) {
    CLI::App* sub = app.add_subcommand(name, help);
    commands[sub] = adder(*sub);
    if (runs_jobs(name)) end_options_at_the_command(*sub);
  };
  add("info", "GPUs, capabilities, limits, clocks, permissions (reads only)",
      wattwise::cli::add_info_command);
  add("measure", "run a command and report its time and energy per GPU and phase",
      wattwise::cli::add_measure_command);
  add("analyze", "metrics, Pareto front and recommendations from a sweep database or a runs CSV",
      wattwise::cli::add_analyze_command);
  add("sweep", "run a job over a plan of GPU and job settings, store every run, and analyse them",
      wattwise::cli::add_sweep_command);
  add("tune", "run a job and tune its power limit or SM clock while it runs, from its iteration markers",
      wattwise::cli::add_tune_command);
  add("runs", "list a sweep database's runs; --failed: the failed ones with the end of their output",
      wattwise::cli::add_runs_command);
  add("report", "tables and charts of a sweep database or a measured trace (HTML, Markdown, CSV)",
      wattwise::cli::add_report_command);
  add("merge", "gather the per-task results of one SLURM job step into per-node and total figures",
      wattwise::cli::add_merge_command);
  add("counter",
      "read each GPU's energy counter once, or the energy since an earlier reading (SLURM "
      "prolog/epilog)",
      wattwise::cli::add_counter_command);
  add("exporter", "serve the GPUs' energy, power, clocks and per-job energy to Prometheus (a node agent)",
      wattwise::cli::add_exporter_command);
  add("restore", "put back GPU settings from a stale journal (wattwise was killed, or the power failed)",
      wattwise::cli::add_restore_command);
  add("daemon", "change GPU settings for users who are not root, within a policy (a root service)",
      wattwise::cli::add_daemon_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "wattwise: %s\n", wattwise::cli::parse_error_line(app, e, argc, argv).c_str());
    return static_cast<int>(wattwise::ErrorKind::kUsage);
  }

  const std::string command = app.get_subcommands().front()->get_name();
  if (!runs_jobs(command)) {
    if (wattwise::workload::StopSignals::stop_requested()) {
      const int signal_number = wattwise::workload::StopSignals::signal_number();
      std::fprintf(stderr, "wattwise: stopped by SIG%s before `%s` started\n",
                   ::sigabbrev_np(signal_number) ? ::sigabbrev_np(signal_number) : "?", command.c_str());
      return wattwise::workload::StopSignals::exit_code();
    }
    stop_signals.reset();
  }

  // Every command warns about GPU settings a killed wattwise left behind (restore reports them itself, the
  // daemon restores them before it serves).
  if (app.get_subcommands().front()->get_name() != "restore" && app.get_subcommands().front()->get_name() != "daemon") {
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
