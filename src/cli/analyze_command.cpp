#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "analysis/analysis.hpp"
#include "analysis/analysis_json.hpp"
#include "analysis/reference.hpp"
#include "analysis/runs_csv.hpp"
#include "cli/analysis_flags.hpp"
#include "cli/commands.hpp"
#include "cli/footprint_flags.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_text.hpp"
#include "report/analysis_report.hpp"
#include "report/footprint_report.hpp"
#include "store/analysis_runs.hpp"
#include "store/results_store.hpp"

namespace wattwise::cli {

namespace {

struct AnalyzeFlags {
  std::string input;
  AnalysisFlags analysis;
  FootprintFlagValues footprint;
  bool json = false;
};

// Runs from a sweep database (read as typed records, with their phases, as `report` and `sweep` read
// them) or from a CSV of runs measured elsewhere. The database also knows which setting is the default.
std::vector<analysis::RunRecord> load_runs(const std::string& path, const std::string& phase,
                                           std::optional<analysis::Setting>& default_setting) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw usage_error(fmt::format("'{}' is a directory: give a sweep database or a runs CSV", path));
  // A FIFO would hang the read, a link to /dev/zero fill memory.
  require_regular_file(path, "a sweep database or a runs CSV");
  if (!std::ifstream(path))
    throw usage_error(fmt::format("cannot read '{}': give a sweep database or a runs CSV", path));
  if (!store::is_database_input(path)) {
    if (!phase.empty() && phase != analysis::kWholeRun)
      throw usage_error(
          "--phase needs a sweep database: a runs CSV has no phases (--phase run is the default)");
    return analysis::read_runs_csv(path);
  }
  auto stored = store::read_analysis_runs(store::ResultsStore::open_read_only(path));
  default_setting = stored.default_setting;
  return std::move(stored.runs);
}

int run_analyze(const AnalyzeFlags& flags) {
  const FootprintRates rates = footprint_rates(flags.footprint);
  analysis::AnalysisOptions options;
  const auto runs = load_runs(flags.input, flags.analysis.phase, options.default_setting);
  apply_analysis_flags(flags.analysis, options);
  const auto result = analysis::analyze(runs, options);
  if (flags.json) {
    auto out = analysis::to_json(result);
    report::add_savings_json(out, result, rates);
    std::cout << json_text(out, 1) << "\n";
  } else {
    std::cout << report::analysis_text(result) << report::savings_text(result, rates) << "\n"
              << report::headline_text(result);
  }
  return 0;
}

}  // namespace

CommandRun add_analyze_command(CLI::App& app) {
  auto flags = std::make_shared<AnalyzeFlags>();
  app.add_option("input", flags->input, "a sweep database (.db) or a CSV of runs (docs/analysis-csv.md)")
      ->required();
  add_analysis_flags(app, flags->analysis);
  add_footprint_flags(app, flags->footprint);
  app.add_flag("--json", flags->json, "print JSON for programs (fields: docs/analysis-json.md)");
  return [flags]() { return run_analyze(*flags); };
}

}  // namespace wattwise::cli
