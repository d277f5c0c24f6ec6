#include "store/analysis_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>

#include "analysis/runs_csv.hpp"
#include "core/error.hpp"
#include "core/text.hpp"
#include "plan/knob.hpp"
#include "store/energy_uncertainty_columns.hpp"
#include "store/phase_rows.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

double knob_number(const plan::KnobSetting& knob, std::size_t plan_index) {
  const auto value = plan::knob_value_number(knob.value);
  if (!value) {
    throw data_error(
        fmt::format("run {}: knob {} has the non-numeric value '{}'; only numeric knobs can be "
                    "analysed",
                    plan_index, valid_utf8(knob.knob), valid_utf8(knob.value)));
  }
  return *value;
}

std::optional<analysis::Setting> plan_reference(const nlohmann::json& plan) {
  if (!plan.contains("reference") || !plan["reference"].is_object()) return std::nullopt;
  analysis::Setting setting;
  for (const auto& [knob, value] : plan["reference"].items())
    if (value.is_number()) setting[knob] = value.get<double>();
  if (setting.empty()) return std::nullopt;
  return setting;
}

bool has_table(sqlite3* db, const std::string& path, const char* name) {
  Statement query(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, std::string(name));
  return query.step();
}

// Each run's node figures (docs/energy-scope.md): every measured GPU from run_gpu_energy, the job's GPU
// count from run_gpu_usage, the node sources from run_node_energy, and the node over each phase from
// run_phase_node_energy, in one query per table. A run without GPU rows (a multi-node run) has none.
void read_node_figures(sqlite3* db, const std::string& path,
                       const std::map<std::int64_t, std::size_t>& position,
                       std::vector<analysis::RunRecord>& runs) {
  const auto run_of = [&](std::int64_t id) -> analysis::RunRecord* {
    const auto it = position.find(id);
    return it == position.end() ? nullptr : &runs[it->second];
  };
  Statement gpus(
      db, path,
      "SELECT run_id, COUNT(*), SUM(energy_j), COUNT(energy_j) FROM run_gpu_energy GROUP BY run_id");
  while (gpus.step()) {
    analysis::RunRecord* run = run_of(gpus.integer(0));
    if (!run) continue;
    run->measured_gpus = static_cast<unsigned>(gpus.integer(1));
    run->node.emplace();
    if (gpus.integer(3) == gpus.integer(1)) run->node->gpus_j = gpus.real(2);
  }
  if (has_table(db, path, "run_gpu_usage")) {
    Statement usage(db, path, "SELECT run_id, SUM(expected) FROM run_gpu_usage GROUP BY run_id");
    while (usage.step())
      if (analysis::RunRecord* run = run_of(usage.integer(0)))
        run->job_gpus = static_cast<unsigned>(usage.integer(1));
  }
  if (has_table(db, path, "run_node_energy")) {
    std::map<std::int64_t, std::map<std::string, bool>> first;  // run -> kind -> no row added yet
    Statement sources(db, path, "SELECT run_id, kind, energy_j FROM run_node_energy ORDER BY run_id, rowid");
    while (sources.step()) {
      analysis::RunRecord* run = run_of(sources.integer(0));
      if (!run || !run->node) continue;
      const std::string kind = sources.text(1);
      std::optional<double>* part = kind == "cpu_package" ? &run->node->cpu_package_j
                                    : kind == "dram"      ? &run->node->dram_j
                                    : kind == "meter"     ? &run->node->meter_j
                                                          : nullptr;
      if (!part) continue;  // core, uncore and psys lie inside the packages
      auto [it, inserted] = first[sources.integer(0)].try_emplace(kind, true);
      add_part(*part, it->second, sources.optional_real(2));
    }
  }
  if (has_table(db, path, "run_phase_node_energy")) {
    Statement phases(
        db, path, "SELECT run_id, name, gpus_j, cpu_package_j, dram_j, meter_j FROM run_phase_node_energy");
    while (phases.step()) {
      analysis::RunRecord* run = run_of(phases.integer(0));
      if (!run) continue;
      const std::string name = valid_utf8(phases.text(1));
      for (analysis::PhaseRecord& phase : run->phases)
        if (phase.name == name)
          phase.node = NodeParts{phases.optional_real(2), phases.optional_real(3), phases.optional_real(4),
                                 phases.optional_real(5)};
    }
  }
}

}  // namespace

std::vector<analysis::PhaseRecord> combine_phases(const std::vector<PhaseResult>& results) {
  std::vector<std::string> names;
  std::map<std::string, analysis::PhaseRecord> all_gpus, per_gpu;
  for (const PhaseResult& p : results) {
    const std::string name = valid_utf8(p.name);  // any bytes until repaired here
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    const analysis::PhaseRecord record{name, p.count, p.time_s, p.energy_j, std::nullopt, p.energy_uncertainty_j};
    if (!p.gpu_index) {
      all_gpus[name] = record;
      continue;
    }
    auto [it, inserted] = per_gpu.try_emplace(name, record);
    if (inserted) continue;
    // The GPUs ran the phase side by side: its time is the longest GPU's, its energy theirs together.
    auto& combined = it->second;
    combined.time_s = std::max(combined.time_s, p.time_s);
    combined.count = std::max(combined.count, p.count);
    combined.energy_j =
        combined.energy_j && p.energy_j ? std::optional(*combined.energy_j + *p.energy_j) : std::nullopt;
    // The GPUs' bars added, as a measurement adds them (measure::PhaseInstance::uncertainty_j).
    combined.energy_uncertainty_j = combined.energy_uncertainty_j && p.energy_uncertainty_j
                                        ? std::optional(*combined.energy_uncertainty_j + *p.energy_uncertainty_j)
                                        : std::nullopt;
  }
  std::vector<analysis::PhaseRecord> phases;
  for (const auto& name : names) phases.push_back(all_gpus.contains(name) ? all_gpus[name] : per_gpu[name]);
  return phases;
}

AnalysisRuns read_analysis_runs(const ResultsStore& store) {
  AnalysisRuns result;
  result.default_setting = plan_reference(store.plan());
  const std::string path = store.path_.string();
  std::map<std::int64_t, std::size_t> position;  // runs.id -> index into result.runs
  std::vector<std::size_t> plan_indices;
  std::vector<std::vector<PhaseResult>> phases;
  // Warm-ups are not analysed, and a failed run has no trustworthy time or energy.
  Statement runs(
      store.db_, path,
      "SELECT id, plan_index, repeat, time_s, energy_j, work, label FROM runs WHERE warmup = 0 AND "
      "error = '' AND time_s IS NOT NULL AND energy_j IS NOT NULL ORDER BY plan_index");
  while (runs.step()) {
    position[runs.integer(0)] = result.runs.size();
    plan_indices.push_back(static_cast<std::size_t>(runs.integer(1)));
    analysis::RunRecord run;
    run.repeat = static_cast<int>(runs.integer(2));
    run.time_s = runs.real(3);
    run.energy_j = runs.real(4);
    run.work = runs.optional_real(5);
    run.label = valid_utf8(runs.text(6));
    result.runs.push_back(std::move(run));
  }
  phases.resize(result.runs.size());
  Statement settings(store.db_, path,
                     "SELECT run_id, knob, value FROM run_settings ORDER BY run_id, position");
  while (settings.step()) {
    const auto it = position.find(settings.integer(0));
    if (it == position.end()) continue;
    const plan::KnobSetting knob{settings.text(1), settings.text(2)};
    result.runs[it->second].setting[valid_utf8(knob.knob)] = knob_number(knob, plan_indices[it->second]);
  }
  read_phase_rows(store.db_, path, [&](std::int64_t run_id, PhaseResult&& phase) {
    if (const auto it = position.find(run_id); it != position.end())
      phases[it->second].push_back(std::move(phase));
  });
  for (const auto& [id, bar] : read_run_energy_uncertainty(store.db_, path))
    if (const auto it = position.find(id); it != position.end())
      result.runs[it->second].energy_uncertainty_j = bar;
  for (std::size_t i = 0; i < result.runs.size(); ++i) result.runs[i].phases = combine_phases(phases[i]);
  read_node_figures(store.db_, path, position, result.runs);
  return result;
}

AnalysisRuns read_runs_file(const std::string& path) {
  if (!is_database_input(path)) return {analysis::read_runs_csv(path), std::nullopt};
  return read_analysis_runs(ResultsStore::open_read_only(path));
}

}  // namespace wattwise::store
