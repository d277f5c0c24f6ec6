#include "analysis/analysis.hpp"

#include <fmt/format.h>

#include "analysis/pareto.hpp"
#include "analysis/reference.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {

Analysis analyze(const std::vector<RunRecord>& runs, const AnalysisOptions& options) {
  Analysis analysis;
  PhasedRuns judged = judge_on_phase(runs, options.phase);
  analysis.basis = std::move(judged.basis);
  analysis.settings = aggregate_runs(judged.runs);
  analysis.reference_index = choose_reference(analysis.settings, options.reference, options.default_setting);
  const SettingAggregate& reference = analysis.reference();
  if (!(reference.energy_j.mean > 0)) {
    // Every metric divides by E_ref; a zero reading means the energy was not measured, not that it was free.
    throw data_error(fmt::format("reference {} has no energy (mean {} J); pick another with --reference",
                                 to_string(reference.setting), reference.energy_j.mean));
  }
  analysis.pareto = pareto_front(analysis.settings);
  analysis.metrics = options.metrics;
  analysis.max_slowdown = options.max_slowdown;
  for (const MetricSpec& metric : options.metrics) {
    analysis.recommendations.push_back(
        recommend(analysis.settings, analysis.reference_index, metric, options.max_slowdown));
  }
  return analysis;
}

}  // namespace wattwise::analysis
