#include "analysis/analysis.hpp"

#include "analysis/pareto.hpp"
#include "analysis/reference.hpp"

namespace wattwise::analysis {

Analysis analyze(const std::vector<RunRecord>& runs, const AnalysisOptions& options) {
  Analysis analysis;
  analysis.settings = aggregate_runs(runs);
  analysis.reference_index = choose_reference(analysis.settings, options.reference, options.default_setting);
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
