// `wattwise runs DB [--failed]`: the runs a sweep stored, one line each; with --failed, the failed ones
// with the end of what their job wrote (schema 8, table run_output).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "store/results_store.hpp"

namespace wattwise::cli {

namespace {

struct RunsFlags {
  std::string database;
  bool failed = false;
};

std::string setting_text(const store::RunRecord& run) {
  std::string text;
  for (const auto& s : run.settings) text += fmt::format("{}{}={}", text.empty() ? "" : " ", s.knob, s.value);
  if (text.empty()) text = "(job as given)";
  if (run.warmup) text += " (warm-up)";
  return for_terminal(text);
}

std::string byte_count(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
}

void print_table(const std::vector<const store::RunRecord*>& runs) {
  struct Row {
    std::string cells[6];
  };
  std::vector<Row> rows{{{"run", "setting", "exit", "time", "energy", "error"}}};
  for (const auto* run : runs)
    rows.push_back({{std::to_string(run->plan_index), setting_text(*run),
                     run->exit_status ? std::to_string(*run->exit_status) : "-",
                     run->time_s ? format_seconds(run->time_s) : "-", format_energy_j(run->energy_j),
                     for_terminal(run->error)}});
  std::size_t width[6] = {};
  for (const auto& row : rows)
    for (int c = 0; c < 6; ++c) width[c] = std::max(width[c], row.cells[c].size());
  for (const auto& row : rows) {
    std::string line = fmt::format("{:>{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {}", row.cells[0], width[0],
                                   row.cells[1], width[1], row.cells[2], width[2], row.cells[3], width[3],
                                   row.cells[4], width[4], row.cells[5]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  }
}

// The end of each stream, line by line, indented; control characters shown as escapes (a job's output may
// hold anything, a terminal escape included).
void print_output(const store::ResultsStore& store, const store::RunRecord& run) {
  std::cout << fmt::format("\nrun {} ({}): {}\n", run.plan_index, setting_text(run), for_terminal(run.error));
  const auto output = store.run_output(run.plan_index);
  if (output.empty()) {
    std::cout << "  no output kept (a database older than schema 8, a simulated run, or a run measured on "
                 "other nodes)\n";
    return;
  }
  for (const auto& stream : output) {
    if (stream.bytes == 0) {
      std::cout << fmt::format("  {}: nothing written\n", stream.stream);
      continue;
    }
    std::cout << fmt::format("  {} ({}{}):\n", stream.stream,
                             stream.truncated ? "the last " + byte_count(stream.tail.size()) + " of " : "",
                             byte_count(stream.bytes));
    std::string_view rest = stream.tail;
    if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    while (true) {
      const auto end = rest.find('\n');
      std::cout << "    " << for_terminal(rest.substr(0, end)) << "\n";
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
}

int run_runs(const RunsFlags& flags) {
  std::error_code ignored;
  if (!std::filesystem::exists(flags.database, ignored))
    throw usage_error(fmt::format("'{}' does not exist: give the --db file of a sweep", flags.database));
  require_regular_file(flags.database, "a sweep database");
  if (!store::is_database_input(flags.database))
    throw usage_error(fmt::format("'{}' is not a sweep database: give the --db file of a sweep",
                                  flags.database));
  const auto store = store::ResultsStore::open_read_only(flags.database);
  const auto runs = store.runs();
  std::vector<const store::RunRecord*> shown;
  for (const auto& run : runs)
    if (!flags.failed || !run.error.empty()) shown.push_back(&run);
  std::sort(shown.begin(), shown.end(),
            [](const auto* a, const auto* b) { return a->plan_index < b->plan_index; });
  if (shown.empty()) {
    std::cerr << fmt::format("wattwise: {} in {}\n", flags.failed ? "no run failed" : "no run stored",
                             for_terminal(flags.database));
    return 0;
  }
  print_table(shown);
  if (flags.failed)
    for (const auto* run : shown) print_output(store, *run);
  return 0;
}

}  // namespace

CommandRun add_runs_command(CLI::App& app) {
  auto flags = std::make_shared<RunsFlags>();
  app.add_option("database", flags->database, "a sweep database (the sweep's --db)")->required();
  app.add_flag("--failed", flags->failed,
               "only the failed runs, each with the end of its job's stdout and stderr (the last 64 KiB)");
  return [flags]() { return run_runs(*flags); };
}

}  // namespace wattwise::cli
