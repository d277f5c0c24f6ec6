#include "report/html/report_store.hpp"

#include <sqlite3.h>

#include <map>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "plan/knob.hpp"
#include "report/html/trace_reader.hpp"
#include "store/analysis_runs.hpp"
#include "store/results_store.hpp"

namespace wattwise::report::html {

namespace {

analysis::Setting to_setting(const std::vector<plan::KnobSetting>& knobs) {
  analysis::Setting setting;
  for (const auto& k : knobs) {
    // A text-valued job knob cannot be drawn against; the analysis CSV leaves it out as well.
    if (const auto value = plan::knob_value_number(k.value)) setting[valid_utf8(k.knob)] = *value;
  }
  return setting;
}

// Phases of one run across its GPUs, combined as the analysis reads them.
std::vector<PhaseTotal> run_phases(const std::vector<store::PhaseResult>& results) {
  std::vector<PhaseTotal> phases;
  for (const auto& p : store::combine_phases(results)) phases.push_back({p.name, p.time_s, p.energy_j});
  return phases;
}

// The run's node energy from its run_node_energy rows: CPU packages + DRAM (absent if a zone lacks a figure),
// and the meter.
void node_figures(const std::vector<store::NodeRunEnergy>& node, RunDetail& detail) {
  bool any_cpu_dram = false, all_present = true;
  double cpu_dram_j = 0;
  for (const auto& n : node) {
    if (n.kind == "meter") detail.node_meter_j = n.energy_j;
    if (n.kind != "cpu_package" && n.kind != "dram") continue;
    any_cpu_dram = true;
    if (n.energy_j)
      cpu_dram_j += *n.energy_j;
    else
      all_present = false;
  }
  if (any_cpu_dram && all_present) detail.node_cpu_dram_j = cpu_dram_j;
}

// plan_index -> the run's trace CSVs (one per GPU) concatenated; the reader tells GPUs apart by column.
std::map<std::size_t, std::string> read_traces(const std::filesystem::path& db) {
  std::map<std::size_t, std::string> traces;
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(raw);
    throw environment_error(fmt::format("cannot open '{}' to read its traces", db.string()));
  }
  std::unique_ptr<sqlite3, decltype(&sqlite3_close)> handle(raw, sqlite3_close);
  sqlite3_stmt* stmt = nullptr;
  const char* sql =
      "SELECT runs.plan_index, traces.csv FROM traces JOIN runs ON runs.id = traces.run_id "
      "ORDER BY runs.plan_index, traces.gpu_index";
  if (sqlite3_prepare_v2(raw, sql, -1, &stmt, nullptr) != SQLITE_OK) return traces;  // no traces table
  std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(stmt, sqlite3_finalize);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto plan_index = static_cast<std::size_t>(sqlite3_column_int64(stmt, 0));
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    if (text) traces[plan_index] += std::string(text) + "\n";  // trace_reader repairs its lines
  }
  return traces;
}

ReportInfo store_info(const store::ResultsStore& store, const std::filesystem::path& db) {
  ReportInfo info;
  info.title = "wattwise report: " + db.filename().string();
  info.source = db.string();
  // Everything read from the database is repaired to valid UTF-8 here, where it enters the report: one
  // flipped byte in a GPU name must not turn the whole report into an "internal error".
  info.command = valid_utf8(store.meta("command"));
  info.method = valid_utf8(store.meta("measurement_method"));
  info.tool_version = valid_utf8(store.meta("tool_version"));
  std::set<std::string> names;
  for (const auto& gpu : store.gpus()) {
    names.insert(valid_utf8(gpu.name));
    info.gpu_indices.push_back(gpu.index);
    if (gpu.default_limit_w) info.default_power_limit_w = *gpu.default_limit_w;
    if (gpu.min_limit_w)
      info.min_power_limit_w = std::max(info.min_power_limit_w.value_or(*gpu.min_limit_w), *gpu.min_limit_w);
    if (gpu.max_limit_w)
      info.max_power_limit_w = std::min(info.max_power_limit_w.value_or(*gpu.max_limit_w), *gpu.max_limit_w);
  }
  for (const auto& name : names) info.gpu += (info.gpu.empty() ? "" : ", ") + name;
  if (store.gpus().size() > 1) info.gpu = fmt::format("{} x {}", store.gpus().size(), info.gpu);
  return info;
}

}  // namespace

ReportModel build_report_model_from_store(const std::filesystem::path& db,
                                          const analysis::AnalysisOptions& options,
                                          const BuildOptions& build) {
  const auto store = store::ResultsStore::open_read_only(db);
  const auto stored = store::read_analysis_runs(store);
  analysis::AnalysisOptions analysis_options = options;
  if (!analysis_options.default_setting) analysis_options.default_setting = stored.default_setting;
  const auto analysis = analysis::analyze(stored.runs, analysis_options);

  const auto traces = read_traces(db);
  std::vector<RunDetail> details;
  for (const auto& run : store.runs()) {
    if (run.warmup || !run.error.empty()) continue;
    RunDetail detail;
    detail.setting = to_setting(run.settings);
    detail.repeat = static_cast<int>(run.repeat);
    detail.phases = run_phases(run.phases);
    node_figures(run.node, detail);
    if (const auto it = traces.find(run.plan_index); it != traces.end()) {
      std::istringstream in(it->second);
      auto trace = read_power_trace(in, fmt::format("{} (trace of run {})", db.string(), run.plan_index));
      detail.power_w = std::move(trace.power_w);
      detail.gpu_power_w = std::move(trace.per_gpu_w);
    }
    details.push_back(std::move(detail));
  }
  ReportModel model = build_report_model(analysis, details, store_info(store, db), build);
  model.tune = store.tune_trace();
  return model;
}

}  // namespace wattwise::report::html
