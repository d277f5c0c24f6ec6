#include "report/html/report_json.hpp"

#include <cmath>

namespace wattwise::report::html {

namespace {

using nlohmann::json;

// NaN and infinities are not JSON; a value that is not finite is as good as absent.
json number(double value) {
  return std::isfinite(value) ? json(value) : json(nullptr);
}
json number(const std::optional<double>& value) {
  return value ? number(*value) : json(nullptr);
}

json numbers(const std::vector<std::optional<double>>& values) {
  json out = json::array();
  for (const auto& v : values) out.push_back(number(v));
  return out;
}

json summary(const analysis::Summary& s) {
  return {{"n", s.n}, {"mean", number(s.mean)}, {"std", number(s.stddev)}, {"ci95", number(s.ci95_half)}};
}

json setting_json(const SettingResult& s) {
  json normalised = json::object();
  for (const auto& [name, v] : s.normalised)
    normalised[name] = {{"value", number(v.value)}, {"std", number(v.stddev)}, {"ci95", number(v.ci95_half)}};
  json values = json::object();
  for (const auto& [knob, value] : s.setting) values[knob] = value;
  return {{"label", s.label},
          {"values", values},
          {"repeats", s.repeats},
          {"energy_j", summary(s.energy_j)},
          {"time_s", summary(s.time_s)},
          {"power_w", summary(s.power_w)},
          {"normalised", normalised},
          {"pareto", s.on_pareto_front},
          {"reference", s.is_reference}};
}

json recommendation_json(const analysis::Recommendation& r) {
  json band = json::array();
  for (const auto& member : r.band) band.push_back(member.setting_index);
  return {{"metric", r.metric.name()},
          {"setting_index", r.setting_index},
          {"metric_value", number(r.metric_value)},
          {"energy_vs_ref_pct", number(r.energy_vs_ref_pct)},
          {"time_vs_ref_pct", number(r.time_vs_ref_pct)},
          {"significant", r.significant ? json(*r.significant) : json(nullptr)},
          {"note", r.note},
          {"best_index", r.best_index},
          {"band", band},
          {"band_known", r.band_known},
          {"tie_rule", r.tie_rule},
          {"decision", r.decision.method}};
}

json fit_json(const KnobFit& f) {
  json xs = json::array(), ys = json::array();
  for (double x : f.xs) xs.push_back(number(x));
  for (double y : f.ys) ys.push_back(number(y));
  // The curve, sampled for drawing: the page needs no algebra.
  json curve = json::array();
  constexpr int kPoints = 50;
  for (int i = 0; i <= kPoints; ++i) {
    const double x = f.fit.x_min + (f.fit.x_max - f.fit.x_min) * i / kPoints;
    curve.push_back({number(x), number(f.fit(x))});
  }
  return {{"knob", f.knob},
          {"metric", f.metric},
          {"a", number(f.fit.a)},
          {"b", number(f.fit.b)},
          {"c", number(f.fit.c)},
          {"r_squared", number(f.fit.r_squared)},
          {"fitted_optimum", {number(f.fit.optimum_x), number(f.fit.optimum_y)}},
          {"measured_optimum", {number(f.measured_optimum_x), number(f.measured_optimum_y)}},
          {"recommended_x", number(f.recommended_x)},
          {"xs", xs},
          {"ys", ys},
          {"curve", curve}};
}

json table_json(const TableRow& r) {
  return {{"setting_index", r.setting_index},
          {"setting", r.setting},
          {"power_w", number(r.power_w)},
          {"energy_j", number(r.energy_j)},
          {"energy_uncertainty_j", number(r.energy_uncertainty_j)},
          {"energy_vs_ref_pct", number(r.energy_vs_ref_pct)},
          {"time_s", number(r.time_s)},
          {"time_vs_ref_pct", number(r.time_vs_ref_pct)},
          {"optimum_for", r.optimum_for}};
}

json single_run_json(const SingleRun& single) {
  json power = json::array(), spans = json::array(), energy = json::array();
  for (const auto& series : single.power_w) power.push_back(numbers(series));
  for (const auto& span : single.spans)
    spans.push_back({{"name", span.name}, {"begin_s", number(span.begin_s)}, {"end_s", number(span.end_s)}});
  return {{"series", single.series},
          {"power_w", power},
          {"gpu_energy_j", numbers(single.gpu_energy_j)},
          {"spans", spans},
          {"unshaded", single.unshaded}};
}

}  // namespace

nlohmann::json to_json(const ReportModel& model) {
  json j;
  j["info"] = {{"title", model.info.title},   {"tool_version", model.info.tool_version},
               {"source", model.info.source}, {"command", model.info.command},
               {"gpu", model.info.gpu},       {"method", model.info.method}};
  j["knobs"] = model.knobs;
  j["quantities"] = model.quantities;
  j["reference_index"] = model.reference_index;
  j["settings"] = json::array();
  for (const auto& s : model.settings) j["settings"].push_back(setting_json(s));
  j["pareto_front"] = model.pareto_front;
  j["iso_lines"] = json::array();
  for (const auto& line : model.iso_lines) {
    json points = json::array();
    for (const auto& [x, y] : line.points) points.push_back({number(x), number(y)});
    j["iso_lines"].push_back({{"metric", line.metric}, {"points", points}});
  }
  j["recommendations"] = json::array();
  for (const auto& r : model.recommendations) j["recommendations"].push_back(recommendation_json(r));
  j["headline"] = model.headline;
  j["lead"] = model.lead ? json{{"metric", model.lead->metric.name()},
                                {"max_slowdown_pct", model.lead->max_slowdown
                                                         ? json(number(*model.lead->max_slowdown * 100))
                                                         : json(nullptr)},
                                {"pick", recommendation_json(model.lead->pick)},
                                {"unconstrained", model.lead->unconstrained
                                                      ? recommendation_json(*model.lead->unconstrained)
                                                      : json(nullptr)}}
                         : json(nullptr);
  j["single_run"] = model.single_run ? single_run_json(*model.single_run) : json(nullptr);
  json grid = json::array();
  for (double t : model.grid_s) grid.push_back(number(t));
  j["grid_s"] = grid;
  j["traces"] = json::array();
  for (const auto& t : model.traces)
    j["traces"].push_back({{"setting_index", t.setting_index},
                           {"runs", t.runs_with_trace},
                           {"power_mean_w", numbers(t.power_mean_w)},
                           {"energy_mean_j", numbers(t.energy_mean_j)},
                           {"energy_std_j", numbers(t.energy_std_j)}});
  json phase_time = json::array(), phase_energy = json::array();
  for (const auto& row : model.phases.time_s) phase_time.push_back(numbers(row));
  for (const auto& row : model.phases.energy_j) phase_energy.push_back(numbers(row));
  j["phases"] = {{"names", model.phases.phase_names}, {"time_s", phase_time}, {"energy_j", phase_energy}};
  j["fits"] = json::array();
  for (const auto& f : model.fits) j["fits"].push_back(fit_json(f));
  j["table"] = json::array();
  for (const auto& r : model.table) j["table"].push_back(table_json(r));
  return j;
}

}  // namespace wattwise::report::html
