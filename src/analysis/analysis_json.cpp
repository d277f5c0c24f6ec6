#include "analysis/analysis_json.hpp"

#include <fmt/format.h>

#include "analysis/curve_model.hpp"

namespace wattwise::analysis {
namespace {

using nlohmann::json;

// The band test's name in the JSON contract (docs/analysis-json.md "band"; band.hpp).
constexpr const char* kBandTest = "one-sided pooled-variance t at 95% on the per-run metric";

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json summary_json(const Summary& summary) {
  return {{"mean", summary.mean},
          {"std", optional_json(summary.stddev)},
          {"ci95", optional_json(summary.ci95_half)}};
}

json summary_json(const std::optional<Summary>& summary) {
  return summary ? summary_json(*summary) : json(nullptr);
}

json setting_entry(const Analysis& analysis, std::size_t index) {
  const SettingAggregate& aggregate = analysis.settings[index];
  const ReferencePoint ref{analysis.reference().energy_j.mean, analysis.reference().time_s.mean};
  json metrics = json::object();
  for (const MetricSpec& metric : analysis.metrics) {
    metrics[metric.name()] = metric_value(metric, aggregate.energy_j.mean, aggregate.time_s.mean, ref);
  }
  return {{"setting", setting_json(aggregate.setting)},
          {"n", aggregate.energy_j.n},
          {"energy_j", summary_json(aggregate.energy_j)},
          {"energy_uncertainty_j", optional_json(aggregate.energy_uncertainty_j)},
          {"time_s", summary_json(aggregate.time_s)},
          {"power_w", summary_json(aggregate.power_w)},
          {"j_per_sample", summary_json(aggregate.j_per_sample)},
          {"gflops_per_w", summary_json(aggregate.gflops_per_w)},
          {"metrics", metrics},
          {"pareto", static_cast<bool>(analysis.pareto.at(index))},
          {"reference", index == analysis.reference_index},
          {"labels", aggregate.labels}};
}

json band_json(const Recommendation& r) {
  json band = json::array();
  for (const BandMember& m : r.band) {
    band.push_back({{"setting", setting_json(m.setting)},
                    {"metric_value", m.metric_value},
                    {"metric_se", optional_json(m.metric_standard_error)},
                    {"se_pooled", m.borrowed_error}});
  }
  return band;
}

json decision_json(const Decision& d) {
  if (d.method != "fit") return {{"method", d.method}, {"reason", d.reason}};
  return {{"method", d.method},
          {"model", "local quadratic around the lowest mean"},
          {"knob", d.knob},
          {"optimum", d.optimum_value},
          {"optimum_interval90", {d.optimum_low, d.optimum_high}},
          {"optimum_median", d.optimum_median},
          {"lack_of_fit", d.lack_of_fit},
          {"median_of", d.median_of_cubics ? "local cubics" : "local quadratics"},
          {"optimum_metric_value", d.optimum_metric},
          {"window", {d.window_low, d.window_high}},
          {"edge", d.edge ? json(*d.edge) : json(nullptr)},
          {"rule", fmt::format("fastest within {:g}% of the fitted optimum, the fit moved to optimum_median",
                               kFitTieMargin * 100)}};
}

json recommendation_json(const Recommendation& r, const Analysis& analysis) {
  return {{"metric", r.metric.name()},
          {"setting", setting_json(r.setting)},
          {"energy_j", r.energy_j},
          {"time_s", r.time_s},
          {"energy_vs_ref_pct", r.energy_vs_ref_pct},
          {"time_vs_ref_pct", r.time_vs_ref_pct},
          {"time_vs_ref_ci95_pct", r.time_vs_ref_ci95_pct
                                       ? json::array({r.time_vs_ref_ci95_pct->first, r.time_vs_ref_ci95_pct->second})
                                       : json(nullptr)},
          {"time_vs_ref_ci95_from",
           r.time_vs_ref_ci95_from ? json(to_string(*r.time_vs_ref_ci95_from)) : json(nullptr)},
          {"time_vs_ref_curve_pct", r.time_vs_ref_curve_pct ? json(*r.time_vs_ref_curve_pct) : json(nullptr)},
          {"metric_value", r.metric_value},
          {"significant", r.significant ? json(*r.significant) : json(nullptr)},
          {"note", r.note},
          {"best",
           {{"setting", setting_json(analysis.settings.at(r.best_index).setting)},
            {"metric_value", r.best_metric_value}}},
          {"band", band_json(r)},
          {"band_known", r.band_known},
          {"band_test", kBandTest},
          {"tie_rule", r.tie_rule},
          {"decision", decision_json(r.decision)}};
}

json headline_json(const Analysis& analysis) {
  const Headline& h = analysis.headline;
  return {{"metric", h.metric.name()},
          {"max_slowdown_pct", h.max_slowdown ? json(*h.max_slowdown * 100) : json(nullptr)},
          {"pick", recommendation_json(h.pick, analysis)},
          {"may_exceed_limit", may_exceed_limit(h)},
          {"unconstrained", h.unconstrained ? recommendation_json(*h.unconstrained, analysis) : json(nullptr)}};
}

json basis_json(const PhaseBasis& basis) {
  const std::string warning = startup_warning(basis);
  return {{"phase", basis.phase},
          {"automatic", basis.automatic},
          {"runs_left_out", basis.runs_left_out},
          {"startup_phase", basis.startup_phase.empty() ? json(nullptr) : json(basis.startup_phase)},
          {"startup_share_mean", optional_json(basis.startup_share_mean)},
          {"startup_share_max", optional_json(basis.startup_share_max)},
          {"startup_warn_share", kStartupWarnShare},
          {"startup_warning", warning.empty() ? json(nullptr) : json(warning)}};
}

// Whose energy the analysis judged on, and the other scope's per-setting energy and picks where both were
// analysed (docs/analysis-json.md "energy_scope").
json scope_json(const Analysis& analysis) {
  const ScopeBasis& scope = analysis.scope;
  json out = {{"scope", to_string(scope.scope)},
              {"automatic", scope.automatic},
              {"gpu_count_varies", scope.gpu_count_varies},
              {"node_known", scope.node_known},
              {"node_differs", scope.node_differs},
              {"node_parts", scope.node_parts},
              {"most_idle_gpus", scope.most_idle_gpus},
              {"text", scope_text(scope)},
              {"note", scope.note.empty() ? json(nullptr) : json(scope.note)},
              {"disagreements", scope_disagreements(analysis)},
              {"other", nullptr}};
  if (!analysis.other_scope) return out;
  const Analysis& other = *analysis.other_scope;
  json settings = json::array();
  for (const SettingAggregate& s : other.settings)
    settings.push_back({{"setting", setting_json(s.setting)},
                        {"energy_j", summary_json(s.energy_j)},
                        {"j_per_sample", summary_json(s.j_per_sample)}});
  json recommendations = json::array();
  for (const Recommendation& r : other.recommendations)
    recommendations.push_back(recommendation_json(r, other));
  out["other"] = {
      {"scope", to_string(other.scope.scope)},
      {"reference",
       {{"setting", setting_json(other.reference().setting)}, {"energy_j", other.reference().energy_j.mean}}},
      {"settings", settings},
      {"recommendations", recommendations}};
  return out;
}

}  // namespace

json setting_json(const Setting& setting) {
  json object = json::object();
  for (const auto& [knob, value] : setting) object[knob] = value;
  return object;
}

json to_json(const Analysis& analysis) {
  const SettingAggregate& reference = analysis.reference();
  json settings = json::array();
  for (std::size_t i = 0; i < analysis.settings.size(); ++i) settings.push_back(setting_entry(analysis, i));
  json recommendations = json::array();
  for (const Recommendation& r : analysis.recommendations)
    recommendations.push_back(recommendation_json(r, analysis));
  return {{"judged_on", basis_json(analysis.basis)},
          {"energy_scope", scope_json(analysis)},
          {"reference",
           {{"setting", setting_json(reference.setting)},
            {"energy_j", reference.energy_j.mean},
            {"time_s", reference.time_s.mean}}},
          {"settings", settings},
          {"recommendations", recommendations},
          {"max_slowdown_pct", analysis.max_slowdown ? json(*analysis.max_slowdown * 100) : json(nullptr)},
          {"headline", headline_json(analysis)}};
}

}  // namespace wattwise::analysis
