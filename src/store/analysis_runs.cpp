#include "store/analysis_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/text.hpp"

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
  for (const RunRecord& stored : store.runs()) {
    // Warm-ups are not analysed, and a failed run has no trustworthy time or energy.
    if (stored.warmup || !stored.error.empty() || !stored.time_s || !stored.energy_j) continue;
    analysis::RunRecord run;
    for (const auto& knob : stored.settings)
      run.setting[valid_utf8(knob.knob)] = knob_number(knob, stored.plan_index);
    run.repeat = static_cast<int>(stored.repeat);
    run.time_s = *stored.time_s;
    run.energy_j = *stored.energy_j;
    run.work = stored.work;
    run.label = valid_utf8(stored.label);
    run.phases = combine_phases(stored.phases);
    result.runs.push_back(std::move(run));
  }
  return result;
}

}  // namespace wattwise::store
