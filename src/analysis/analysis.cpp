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
  ScopedRuns scoped = apply_energy_scope(judged.runs, options.energy_scope, analysis.basis.phase);
  analysis.scope = std::move(scoped.basis);
  analysis.settings = aggregate_runs(scoped.runs);
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
  analysis.headline.metric = options.headline_metric;
  analysis.headline.max_slowdown = options.headline_max_slowdown;
  analysis.headline.pick = recommend(analysis.settings, analysis.reference_index, options.headline_metric,
                                     options.headline_max_slowdown);
  if (options.headline_max_slowdown)
    analysis.headline.unconstrained =
        recommend(analysis.settings, analysis.reference_index, options.headline_metric, std::nullopt);
  if (options.compare_scopes && analysis.scope.node_differs) {
    AnalysisOptions other = options;
    other.energy_scope = analysis.scope.scope == EnergyScope::kNode ? EnergyScope::kJob : EnergyScope::kNode;
    other.compare_scopes = false;
    analysis.other_scope = std::make_shared<const Analysis>(analyze(runs, other));
  }
  return analysis;
}

std::vector<std::string> scope_disagreements(const Analysis& analysis) {
  std::vector<std::string> lines;
  if (!analysis.other_scope) return lines;
  const bool node = analysis.scope.scope == EnergyScope::kNode;
  for (std::size_t i = 0; i < analysis.recommendations.size(); ++i) {
    const Recommendation& here = analysis.recommendations[i];
    const Recommendation& there = analysis.other_scope->recommendations.at(i);
    if (same_setting(here.setting, there.setting)) continue;
    lines.push_back(fmt::format("{}: {} on the {} energy (judged), {} on the {}", here.metric.name(),
                                to_string(here.setting), node ? "node's" : "job's GPUs'",
                                to_string(there.setting), node ? "job's GPUs' alone" : "node's"));
  }
  return lines;
}

bool may_exceed_limit(const Headline& headline) {
  const auto& interval = headline.pick.time_vs_ref_ci95_pct;
  return headline.max_slowdown && interval && interval->second > *headline.max_slowdown * 100;
}

bool judged_within_on_the_curve_only(const Headline& headline) {
  return within_on_the_curve_only(headline.pick, headline.max_slowdown);
}

bool slowdown_unknown(const Headline& headline) {
  return headline.max_slowdown && headline.pick.time_vs_ref_ci95_from == SlowdownIntervalFrom::kNoRepeats;
}

}  // namespace wattwise::analysis
