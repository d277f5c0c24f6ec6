#include <algorithm>
#include <functional>
#include <numeric>

#include "analysis/metrics.hpp"
#include "analysis/statistics.hpp"
#include "report/html/report_parts.hpp"

namespace wattwise::report::html {

namespace {

using analysis::MetricKind;
using analysis::MetricSpec;

// A quantity of the charts: a name and how one (E, t) pair becomes its value normalised to the reference.
struct Quantity {
  std::string name;
  std::function<double(double energy_j, double time_s, const analysis::ReferencePoint& ref)> normalised;
};

std::vector<Quantity> quantities_for(const std::vector<MetricSpec>& metrics) {
  auto metric = [](MetricSpec spec) {
    return [spec](double e, double t, const analysis::ReferencePoint& ref) {
      return analysis::metric_value(spec, e, t, ref);
    };
  };
  std::vector<Quantity> out = {
      {"P", [](double e, double t,
               const analysis::ReferencePoint& ref) { return (e / t) / (ref.energy_j / ref.time_s); }},
      {"E", metric({MetricKind::kEnergy, 0})},
      {"t", metric({MetricKind::kTime, 0})},
      {"EDP", metric({MetricKind::kEdp, 0})},
  };
  for (const auto& m : metrics)
    if (m.kind == MetricKind::kEds) out.push_back({m.name(), metric(m)});
  return out;
}

NormalisedValue normalise(const Quantity& q, const analysis::SettingAggregate& s,
                          const analysis::ReferencePoint& ref) {
  NormalisedValue v;
  v.value = q.normalised(s.energy_j.mean, s.time_s.mean, ref);
  std::vector<double> per_run;
  for (const auto& run : s.runs) per_run.push_back(q.normalised(run.energy_j, run.time_s, ref));
  const auto summary = analysis::summarize(per_run);
  v.stddev = summary.stddev;
  v.ci95_half = summary.ci95_half;
  return v;
}

// Where E, EDP and EDS(k) equal the reference's, in the plane of x = t / t_ref, y = E / E_ref:
// E: y = 1; EDP: y = 1 / x; EDS(k): ((k - 1) y + x) / k = 1, so y = (k - x) / (k - 1).
std::vector<IsoLine> iso_lines(const ReportModel& model, const std::vector<MetricSpec>& metrics) {
  double x_lo = 1, x_hi = 1;
  for (const auto& s : model.settings) {
    x_lo = std::min(x_lo, s.normalised.at("t").value);
    x_hi = std::max(x_hi, s.normalised.at("t").value);
  }
  const double margin = std::max(0.02, (x_hi - x_lo) * 0.05);
  x_lo = std::max(0.05, x_lo - margin);
  x_hi += margin;
  constexpr int kPoints = 60;
  auto sample = [&](auto y_of_x) {
    std::vector<std::pair<double, double>> points;
    for (int i = 0; i <= kPoints; ++i) {
      const double x = x_lo + (x_hi - x_lo) * i / kPoints;
      points.emplace_back(x, y_of_x(x));
    }
    return points;
  };
  std::vector<IsoLine> lines;
  lines.push_back({"E", {{x_lo, 1.0}, {x_hi, 1.0}}});
  lines.push_back({"EDP", sample([](double x) { return 1.0 / x; })});
  for (const auto& m : metrics) {
    if (m.kind != MetricKind::kEds) continue;
    const double k = m.k;
    lines.push_back({m.name(), sample([k](double x) { return (k - x) / (k - 1); })});
  }
  return lines;
}

std::vector<TableRow> table_rows(const ReportModel& model) {
  const auto& ref = model.settings.at(model.reference_index);
  std::vector<TableRow> rows;
  for (std::size_t i = 0; i < model.settings.size(); ++i) {
    const auto& s = model.settings[i];
    TableRow row;
    row.setting_index = i;
    row.setting = s.label;
    row.power_w = s.power_w.mean;
    row.energy_j = s.energy_j.mean;
    row.energy_uncertainty_j = s.energy_uncertainty_j;
    row.time_s = s.time_s.mean;
    if (ref.energy_j.mean > 0) row.energy_vs_ref_pct = 100 * (s.energy_j.mean / ref.energy_j.mean - 1);
    if (ref.time_s.mean > 0) row.time_vs_ref_pct = 100 * (s.time_s.mean / ref.time_s.mean - 1);
    for (const auto& r : model.recommendations)
      if (r.setting_index == i) row.optimum_for.push_back(r.metric.name());
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::size_t find_setting(const ReportModel& model, const analysis::Setting& setting) {
  for (std::size_t i = 0; i < model.settings.size(); ++i)
    if (analysis::same_setting(model.settings[i].setting, setting)) return i;
  return model.settings.size();
}

void fill_settings(ReportModel& model, const analysis::Analysis& analysis) {
  const auto& reference = analysis.reference();
  const analysis::ReferencePoint ref{reference.energy_j.mean, reference.time_s.mean};
  const auto quantities = quantities_for(analysis.metrics);
  model.quantities.clear();
  for (const auto& q : quantities) model.quantities.push_back(q.name);

  model.knobs.clear();
  for (const auto& s : analysis.settings)
    for (const auto& [knob, value] : s.setting)
      if (std::find(model.knobs.begin(), model.knobs.end(), knob) == model.knobs.end())
        model.knobs.push_back(knob);

  model.reference_index = analysis.reference_index;
  model.settings.clear();
  for (std::size_t i = 0; i < analysis.settings.size(); ++i) {
    const auto& s = analysis.settings[i];
    SettingResult r;
    r.setting = s.setting;
    r.label = analysis::to_string(s.setting);
    if (r.label.empty()) r.label = "as measured";
    r.repeats = s.runs.size();
    r.energy_j = s.energy_j;
    r.energy_uncertainty_j = s.energy_uncertainty_j;
    r.time_s = s.time_s;
    r.power_w = s.power_w;
    for (const auto& q : quantities) r.normalised[q.name] = normalise(q, s, ref);
    r.on_pareto_front = i < analysis.pareto.size() && analysis.pareto[i];
    r.is_reference = i == analysis.reference_index;
    model.settings.push_back(std::move(r));
  }

  model.pareto_front.clear();
  for (std::size_t i = 0; i < model.settings.size(); ++i)
    if (model.settings[i].on_pareto_front) model.pareto_front.push_back(i);
  std::sort(model.pareto_front.begin(), model.pareto_front.end(), [&](std::size_t a, std::size_t b) {
    return model.settings[a].time_s.mean < model.settings[b].time_s.mean;
  });

  model.recommendations = analysis.recommendations;
  model.lead = analysis.headline;
  model.max_slowdown = analysis.max_slowdown;
  model.basis = analysis.basis;
  model.scope = analysis.scope;
  model.other_scope_picks.clear();
  if (analysis.other_scope)
    for (const auto& r : analysis.other_scope->recommendations)
      model.other_scope_picks.push_back(analysis::to_string(r.setting));
  model.scope_warnings = analysis::scope_disagreements(analysis);
  model.iso_lines = iso_lines(model, analysis.metrics);
  model.table = table_rows(model);
}

}  // namespace wattwise::report::html
