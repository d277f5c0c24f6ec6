#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "analysis/analysis.hpp"
#include "analysis/analysis_json.hpp"
#include "analysis/reference.hpp"
#include "analysis/runs_csv.hpp"
#include "cli/analysis_flags.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "report/analysis_report.hpp"
#include "store/results_store.hpp"

namespace wattwise::cli {

namespace {

struct AnalyzeFlags {
  std::string input;
  AnalysisFlags analysis;
  std::string phase;
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
// With --phase, each run counts as its phase's time and energy (summed over the phase's occurrences and the
// job's GPUs): the energy of an epoch rather than of the whole process with its start-up. A run without
// that phase is left out, and said so.
std::vector<analysis::RunRecord> phase_runs(const store::ResultsStore& store, const std::string& phase,
                                            const std::string& path) {
  std::vector<analysis::RunRecord> runs;
  std::size_t without = 0;
  for (const auto& run : store.runs()) {
    if (run.warmup || !run.error.empty()) continue;
    auto it = std::find_if(run.phases.begin(), run.phases.end(),
                           [&](const auto& p) { return p.name == phase && !p.gpu_index; });
    if (it == run.phases.end() || !it->energy_j || it->time_s <= 0) {
      ++without;
      continue;
    }
    analysis::RunRecord r;
    for (const auto& s : run.settings) {
      try {
        r.setting[s.knob] = std::stod(s.value);
      } catch (const std::exception&) {
        throw data_error(fmt::format("{}: knob {} has the non-numeric value '{}'", path, s.knob, s.value));
      }
    }
    r.repeat = static_cast<int>(run.repeat);
    r.time_s = it->time_s;
    r.energy_j = *it->energy_j;
    r.work = run.work;
    r.label = run.label;
    runs.push_back(std::move(r));
  }
  if (runs.empty())
    throw usage_error(
        fmt::format("no successful run of '{}' has a phase named '{}': check the names with "
                    "`wattwise report {} --format md`",
                    path, phase, path));
  if (without > 0)
    std::cerr << fmt::format("wattwise: {} run(s) without a '{}' phase left out\n", without, phase);
  return runs;
}

std::vector<analysis::RunRecord> load_runs(const std::string& path, const std::string& phase,
                                           std::optional<analysis::Setting>& default_setting) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw usage_error(fmt::format("'{}' is a directory: give a sweep database or a runs CSV", path));
  if (!std::ifstream(path))
    throw usage_error(fmt::format("cannot read '{}': give a sweep database or a runs CSV", path));
  if (!looks_like_sqlite(path)) {
    if (!phase.empty()) throw usage_error("--phase needs a sweep database: a runs CSV has no phases");
    return analysis::read_runs_csv(path);
  }
  const auto store = store::ResultsStore::open_read_only(path);
  const auto plan = store.plan();
  if (plan.contains("reference") && plan["reference"].is_object()) {
    analysis::Setting setting;
    for (const auto& [knob, value] : plan["reference"].items())
      if (value.is_number()) setting[knob] = value.get<double>();
    if (!setting.empty()) default_setting = setting;
  }
  if (!phase.empty()) return phase_runs(store, phase, path);
  std::stringstream csv;
  store.export_runs_csv(csv);
  return analysis::parse_runs_csv(csv, path);
}

int run_analyze(const AnalyzeFlags& flags) {
  analysis::AnalysisOptions options;
  const auto runs = load_runs(flags.input, flags.phase, options.default_setting);
  apply_analysis_flags(flags.analysis, options);
  const auto result = analysis::analyze(runs, options);
  if (flags.json) {
    std::cout << json_text(analysis::to_json(result), 1) << "\n";
  } else {
    std::cout << report::analysis_text(result);
  }
  return 0;
}

}  // namespace

CommandRun add_analyze_command(CLI::App& app) {
  auto flags = std::make_shared<AnalyzeFlags>();
  app.add_option("input", flags->input, "a sweep database (.db) or a CSV of runs (docs/analysis-csv.md)")
      ->required();
  add_analysis_flags(app, flags->analysis);
  app.add_option(
      "--phase", flags->phase,
      "analyse one marked phase of each run (e.g. epoch) instead of the whole run (databases only)");
  app.add_flag("--json", flags->json, "print JSON for programs (fields: docs/analysis-json.md)");
  return [flags]() { return run_analyze(*flags); };
}

}  // namespace wattwise::cli
