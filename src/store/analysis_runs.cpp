#include "store/analysis_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/text.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {
namespace {

double knob_number(const plan::KnobSetting& knob, std::size_t plan_index) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(knob.value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != knob.value.size() || !std::isfinite(value)) {
    throw data_error(
        fmt::format("run {}: knob {} has the non-numeric value '{}'; only numeric knobs can be "
                    "analysed",
                    plan_index, valid_utf8(knob.knob), valid_utf8(knob.value)));
  }
  return value;
}

std::optional<analysis::Setting> plan_reference(const nlohmann::json& plan) {
  if (!plan.contains("reference") || !plan["reference"].is_object()) return std::nullopt;
  analysis::Setting setting;
  for (const auto& [knob, value] : plan["reference"].items())
    if (value.is_number()) setting[knob] = value.get<double>();
  if (setting.empty()) return std::nullopt;
  return setting;
}

}  // namespace

std::vector<analysis::PhaseRecord> combine_phases(const std::vector<PhaseResult>& results) {
  std::vector<std::string> names;
  std::map<std::string, analysis::PhaseRecord> all_gpus, per_gpu;
  for (const PhaseResult& p : results) {
    const std::string name = valid_utf8(p.name);  // any bytes until repaired here
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    const analysis::PhaseRecord record{name, p.count, p.time_s, p.energy_j};
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
  Statement phase_rows(
      store.db_, path,
      "SELECT run_id, gpu_index, name, count, time_s, energy_j FROM run_phases ORDER BY run_id, "
      "rowid");
  while (phase_rows.step()) {
    const auto it = position.find(phase_rows.integer(0));
    if (it == position.end()) continue;
    PhaseResult phase;
    if (auto gpu = phase_rows.optional_integer(1)) phase.gpu_index = static_cast<unsigned>(*gpu);
    phase.name = phase_rows.text(2);
    phase.count = static_cast<unsigned>(phase_rows.integer(3));
    phase.time_s = phase_rows.real(4);
    phase.energy_j = phase_rows.optional_real(5);
    phases[it->second].push_back(std::move(phase));
  }
  for (std::size_t i = 0; i < result.runs.size(); ++i) result.runs[i].phases = combine_phases(phases[i]);
  return result;
}

}  // namespace wattwise::store
