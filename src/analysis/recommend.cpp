#include "analysis/recommend.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analysis/band.hpp"
#include "analysis/curve_model.hpp"
#include "analysis/slowdown_limit.hpp"
#include "analysis/statistics.hpp"
#include "core/units.hpp"

namespace wattwise::analysis {
namespace {

ReferencePoint reference_point(const SettingAggregate& reference) {
  return {reference.energy_j.mean, reference.time_s.mean};
}

// Lower is better after this, whatever the metric's direction.
double score(const MetricSpec& metric, const SettingAggregate& aggregate, const ReferencePoint& ref) {
  const double value = metric_value(metric, aggregate.energy_j.mean, aggregate.time_s.mean, ref);
  return metric.higher_is_better() ? -value : value;
}

double distance(const Setting& setting, const Setting& reference) {
  double sum = 0;
  for (const auto& [knob, value] : setting) {
    const auto ref = reference.find(knob);
    if (ref == reference.end()) continue;
    sum += std::fabs(value - ref->second) / std::max(std::fabs(ref->second), 1e-300);
  }
  return sum;
}

bool tied(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

std::vector<double> per_run_values(const MetricSpec& metric, const SettingAggregate& aggregate,
                                   const ReferencePoint& ref) {
  std::vector<double> values;
  for (const RunPoint& run : aggregate.runs)
    values.push_back(metric_value(metric, run.energy_j, run.time_s, ref));
  return values;
}

void judge_significance(Recommendation& chosen, const std::vector<SettingAggregate>& settings,
                        std::size_t reference_index) {
  if (chosen.setting_index == reference_index) {
    chosen.significant = false;
    chosen.note = chosen.best_index == reference_index
                      ? "the reference setting is the best"
                      : "the reference setting is within the noise of the best";
    return;
  }
  const ReferencePoint ref = reference_point(settings[reference_index]);
  // First whether the settings differ at all: the recommendation was picked out of all of them for looking
  // best, so its own test against the reference alone would claim a gain on settings that are all alike
  // (every limit run as the same one: 28% of such sweeps, bench_adaptive_regret's A/A).
  std::vector<std::vector<double>> groups;
  for (const SettingAggregate& s : settings) groups.push_back(per_run_values(chosen.metric, s, ref));
  if (anova_differs(groups) == false) {
    chosen.significant = false;
    chosen.note = "the recommended setting is not distinguishable from the reference within the noise: the "
                  "settings do not differ beyond the noise between repeats (one-way ANOVA, 95%)";
    return;
  }
  chosen.significant = welch_differs(per_run_values(chosen.metric, settings[chosen.setting_index], ref),
                                     per_run_values(chosen.metric, settings[reference_index], ref));
  if (!chosen.significant) {
    chosen.note = "no repeats: significance unknown";
  } else if (*chosen.significant) {
    chosen.note =
        "the gain over the reference is larger than the noise between repeats (Welch's t-test, 95%)";
  } else {
    chosen.note = "the recommended setting is not distinguishable from the reference within the noise";
  }
}

// The band around recommendation.best_index and the pick inside it (setting_index).
void fill_band(Recommendation& recommendation, const std::vector<SettingAggregate>& settings,
               const ReferencePoint& ref, const std::vector<bool>& eligible) {
  const MetricSpec& metric = recommendation.metric;
  const auto estimates = metric_estimates(settings, ref, metric);
  const Band band = indistinguishable_band(estimates, recommendation.best_index, eligible);
  recommendation.band_known = band.known;
  for (std::size_t i : band.members) {
    const double value = metric_value(metric, settings[i].energy_j.mean, settings[i].time_s.mean, ref);
    recommendation.band.push_back(
        {i, settings[i].setting, value, estimates[i].standard_error, estimates[i].borrowed});
  }
  recommendation.tie_rule = "fastest within 0.5%";
  recommendation.setting_index = pick_in_band(settings, estimates, band, recommendation.best_index);
}

bool hardware_knob(const std::string& knob) {
  return knob == "power_limit_w" || knob == "sm_clock_mhz" || knob == "mem_clock_mhz";
}

std::string unit_of(const std::string& knob) {
  return knob.ends_with("_w") ? " W" : knob.ends_with("_mhz") ? " MHz" : "";
}

// The one knob that varies, when the settings are a one-knob sweep of a hardware knob with enough values;
// else the reason the pick falls back to the means.
struct Fittable {
  std::optional<std::string> knob;
  std::string reason;
};

Fittable fittable(const std::vector<SettingAggregate>& settings) {
  std::map<std::string, std::set<double>> values;
  for (const auto& s : settings)
    for (const auto& [knob, value] : s.setting) values[knob].insert(value);
  std::vector<std::string> varying;
  for (const auto& [knob, set] : values)
    if (set.size() > 1) varying.push_back(knob);
  for (const auto& s : settings)
    if (s.setting.size() != values.size()) return {std::nullopt, "the settings do not all name the same knobs"};
  if (varying.empty()) return {std::nullopt, "no knob varies"};
  if (varying.size() > 1)
    return {std::nullopt, fmt::format("{} knobs vary ({}): the fit takes one", varying.size(),
                                      fmt::join(varying, ", "))};
  const std::string& knob = varying.front();
  if (!hardware_knob(knob))
    return {std::nullopt, fmt::format("{} is a knob of the job, taken as categorical", knob)};
  if (values[knob].size() < kMinFitValues)
    return {std::nullopt, fmt::format("{} values of {}: a fit needs at least {}", values[knob].size(), knob,
                                      kMinFitValues)};
  return {knob, ""};
}

// "At most X% slower" judged as the adaptive sweep judges it (slowdown_limit.hpp): on the time curve where one
// hardware knob can be fitted (`knob`; settings are in setting order, so ascending in it), else on the means.
SlowdownLimitJudgement judge_limit(const std::vector<SettingAggregate>& settings, std::size_t reference,
                                   double max_slowdown, const std::optional<std::string>& knob) {
  std::vector<TimeCurvePoint> points;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    TimeCurvePoint p{knob ? settings[i].setting.at(*knob) : double(i), {}};
    for (const RunPoint& run : settings[i].runs) p.times_s.push_back(run.time_s);
    if (p.times_s.empty()) p.times_s.push_back(settings[i].time_s.mean);
    points.push_back(std::move(p));
  }
  return judge_slowdown_limit(points, reference, max_slowdown, knob.has_value());
}

// The pick of the decision model; settings are in setting order, so ascending in the one knob that varies.
std::size_t fitted_pick(Recommendation& r, const std::vector<SettingAggregate>& settings,
                        const ReferencePoint& ref, const std::vector<bool>& eligible, const std::string& knob) {
  const double sign = r.metric.higher_is_better() ? -1 : 1;
  std::vector<CurvePoint> points;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    CurvePoint p{settings[i].setting.at(knob), {}, settings[i].time_s.mean, eligible[i]};
    for (const RunPoint& run : settings[i].runs)
      p.values.push_back(sign * metric_value(r.metric, run.energy_j, run.time_s, ref));
    points.push_back(std::move(p));
  }
  const CurveFit fit = fit_curve(points);
  Decision& d = r.decision;
  d.method = "fit";
  d.knob = knob;
  d.optimum_value = fit.optimum_x;
  d.optimum_median = fit.optimum_median;
  d.optimum_low = fit.optimum_low;
  d.optimum_high = fit.optimum_high;
  d.optimum_metric = sign * fit.optimum_y;
  d.window_low = points[fit.first].x;
  d.window_high = points[fit.last].x;
  d.edge = fit.edge;
  d.lack_of_fit = fit.lack_of_fit;
  d.median_of_cubics = fit.median_of_cubics;
  return fit.pick;
}

}  // namespace

std::string Decision::text() const {
  if (method != "fit") return fmt::format("picked from the per-setting means ({})", reason);
  const std::string unit = unit_of(knob);
  std::string text = fmt::format(
      "picked from a local quadratic fit across {} ({:g}-{:g}{}): fitted optimum {:.0f}{} (90% interval "
      "{:.0f}-{:.0f}{}, median of the resampled fits {:.0f}{}), the fastest setting within {:g}% of the "
      "optimum with the fit moved to that median",
      knob, window_low, window_high, unit, optimum_value, unit, optimum_low, optimum_high, unit,
      optimum_median, unit, kFitTieMargin * 100);
  if (median_of_cubics)
    text += " (the quadratic misfits: that median is of resampled local cubics)";
  else if (lack_of_fit)
    text +=
        " (the quadratic misfits, but its window has too few values for a cubic: that median is of the "
        "resampled quadratics)";
  if (edge) text += "; " + edge_text();
  return text;
}

std::string Decision::edge_text() const {
  if (!edge) return "";
  return fmt::format("the optimum may lie {} {:g}{}: extend the range", *edge, optimum_value, unit_of(knob));
}

Recommendation recommend(const std::vector<SettingAggregate>& settings, std::size_t reference_index,
                         const MetricSpec& metric, std::optional<double> max_slowdown) {
  const SettingAggregate& reference = settings.at(reference_index);
  const ReferencePoint ref = reference_point(reference);
  std::vector<bool> eligible(settings.size(), true);
  std::size_t best = reference_index;
  const Fittable fit = fittable(settings);
  std::optional<SlowdownLimitJudgement> limit;
  if (max_slowdown) limit = judge_limit(settings, reference_index, *max_slowdown, fit.knob);
  const bool curve = limit && limit->on_curve;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    eligible[i] = !limit || limit->within[i];
    if (!eligible[i]) continue;
    const double candidate = score(metric, settings[i], ref);
    const double incumbent = score(metric, settings[best], ref);
    const bool better = tied(candidate, incumbent) ? distance(settings[i].setting, reference.setting) <
                                                         distance(settings[best].setting, reference.setting)
                                                   : candidate < incumbent;
    if (better) best = i;
  }
  eligible[reference_index] = true;  // the reference always qualifies
  Recommendation recommendation;
  recommendation.metric = metric;
  recommendation.best_index = best;
  recommendation.best_metric_value =
      metric_value(metric, settings[best].energy_j.mean, settings[best].time_s.mean, ref);
  fill_band(recommendation, settings, ref, eligible);
  if (fit.knob)
    recommendation.setting_index = fitted_pick(recommendation, settings, ref, eligible, *fit.knob);
  else
    recommendation.decision.reason = fit.reason;
  const std::size_t pick = recommendation.setting_index;
  const SettingAggregate& chosen = settings[pick];
  recommendation.setting = chosen.setting;
  recommendation.metric_value = metric_value(metric, chosen.energy_j.mean, chosen.time_s.mean, ref);
  recommendation.energy_j = chosen.energy_j.mean;
  recommendation.time_s = chosen.time_s.mean;
  recommendation.energy_vs_ref_pct = 100 * (chosen.energy_j.mean / ref.energy_j - 1);
  recommendation.time_vs_ref_pct = 100 * (chosen.time_s.mean / ref.time_s - 1);
  if (curve)
    recommendation.time_vs_ref_curve_pct =
        100 * (limit->time_s[pick] / limit->time_s[reference_index] - 1);
  if (pick != reference_index) {
    // A pick run once is the least sure of all, not one to say nothing about: the job's pooled spread stands
    // in for the repeats it lacks (docs/evidence/adaptive-sweep.md "A slowdown interval for picks without
    // repeats").
    const auto interval =
        slowdown_interval95(chosen.time_s, settings[reference_index].time_s, pooled_time_spread(settings));
    if (interval) recommendation.time_vs_ref_ci95_pct = interval->pct;
    recommendation.time_vs_ref_ci95_from = !interval          ? SlowdownIntervalFrom::kNoRepeats
                                           : interval->pooled ? SlowdownIntervalFrom::kPooledSpread
                                                              : SlowdownIntervalFrom::kRepeats;
  }
  judge_significance(recommendation, settings, reference_index);
  if (!fit.knob && pick != best) {
    recommendation.note +=
        fmt::format("; picked the {} of the {} settings within the noise of the best ({})",
                    recommendation.tie_rule, recommendation.band.size(), to_string(settings[best].setting));
  }
  recommendation.note += "; " + recommendation.decision.text();
  if (max_slowdown) {
    const double limit_pct = *max_slowdown * 100;
    recommendation.note += fmt::format(
        "; only settings at most {:g}% slower than the reference qualified{}", limit_pct,
        curve      ? ", judged on the time curve through each setting's neighbours"
        : fit.knob ? ", judged on the means: a run's time is not positive, which the time curve cannot take"
                   : "");
    if (within_on_the_curve_only(recommendation, max_slowdown))
      recommendation.note += fmt::format(": this one is {} on it, its own runs' mean {}",
                                         format_percent(recommendation.time_vs_ref_curve_pct),
                                         format_percent_over(recommendation.time_vs_ref_pct, limit_pct));
  }
  return recommendation;
}

bool within_on_the_curve_only(const Recommendation& r, std::optional<double> max_slowdown) {
  return max_slowdown && r.time_vs_ref_curve_pct && r.time_vs_ref_pct > *max_slowdown * 100;
}

}  // namespace wattwise::analysis
