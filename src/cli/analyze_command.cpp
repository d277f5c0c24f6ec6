#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "analysis/analysis.hpp"
#include "analysis/analysis_json.hpp"
#include "analysis/reference.hpp"
#include "analysis/runs_csv.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "experiment/results_store.hpp"
#include "report/analysis_report.hpp"

namespace wattwise::cli {

namespace {

struct AnalyzeFlags {
  std::string input;
  std::vector<std::string> metrics;
  std::string max_slowdown;
  std::string reference;
  bool json = false;
};

bool looks_like_sqlite(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof header);
  return in.gcount() == 16 && std::string(header, 15) == "SQLite format 3";
}

// Runs from a sweep database (through the same CSV contract the export uses: one code path for both) or
// from a CSV of runs measured elsewhere. The database also knows which setting is the default.
std::vector<analysis::RunRecord> load_runs(const std::string& path, std::optional<analysis::Setting>& default_setting) {
  if (!std::ifstream(path)) throw usage_error(fmt::format("cannot read '{}': give a sweep database or a runs CSV", path));
  if (!looks_like_sqlite(path)) return analysis::read_runs_csv(path);
  const auto store = experiment::ResultsStore::open_read_only(path);
  const auto plan = store.plan();
  if (plan.contains("reference") && plan["reference"].is_object()) {
    analysis::Setting setting;
    for (const auto& [knob, value] : plan["reference"].items())
      if (value.is_number()) setting[knob] = value.get<double>();
    if (!setting.empty()) default_setting = setting;
  }
  std::stringstream csv;
  store.export_runs_csv(csv);
  return analysis::parse_runs_csv(csv, path);
}

int run_analyze(const AnalyzeFlags& flags) {
  analysis::AnalysisOptions options;
  const auto runs = load_runs(flags.input, options.default_setting);
  options.metrics = analysis::metrics_with(flags.metrics);
  if (!flags.max_slowdown.empty()) options.max_slowdown = analysis::parse_max_slowdown(flags.max_slowdown);
  if (!flags.reference.empty()) options.reference = analysis::parse_setting_spec(flags.reference);
  const auto result = analysis::analyze(runs, options);
  if (flags.json) {
    std::cout << analysis::to_json(result).dump(1) << "\n";
  } else {
    std::cout << report::analysis_text(result);
  }
  return 0;
}

}  // namespace

CommandRun add_analyze_command(CLI::App& app) {
  auto flags = std::make_shared<AnalyzeFlags>();
  app.add_option("input", flags->input, "a sweep database (.db) or a CSV of runs (docs/analysis-csv.md)")->required();
  app.add_option("--metric", flags->metrics,
                 "add a metric: E, edp, ed2p, eds:K (e.g. eds:1.5), gain-loss, time (repeatable)");
  app.add_option("--max-slowdown", flags->max_slowdown, "only recommend settings at most this much slower, e.g. 10%");
  app.add_option("--reference", flags->reference, "the reference setting, e.g. power_limit_w=300");
  app.add_flag("--json", flags->json, "print JSON for programs (fields: docs/analysis-json.md)");
  return [flags]() { return run_analyze(*flags); };
}

}  // namespace wattwise::cli
