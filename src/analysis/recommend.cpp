#include "analysis/recommend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/band.hpp"
#include "analysis/statistics.hpp"

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

}  // namespace

Recommendation recommend(const std::vector<SettingAggregate>& settings, std::size_t reference_index,
                         const MetricSpec& metric, std::optional<double> max_slowdown) {
  const SettingAggregate& reference = settings.at(reference_index);
  const ReferencePoint ref = reference_point(reference);
  std::vector<bool> eligible(settings.size(), true);
  std::size_t best = reference_index;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    eligible[i] = !max_slowdown || settings[i].time_s.mean <= (1 + *max_slowdown) * ref.time_s;
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
  const std::size_t pick = recommendation.setting_index;
  const SettingAggregate& chosen = settings[pick];
  recommendation.setting = chosen.setting;
  recommendation.metric_value = metric_value(metric, chosen.energy_j.mean, chosen.time_s.mean, ref);
  recommendation.energy_j = chosen.energy_j.mean;
  recommendation.time_s = chosen.time_s.mean;
  recommendation.energy_vs_ref_pct = 100 * (chosen.energy_j.mean / ref.energy_j - 1);
  recommendation.time_vs_ref_pct = 100 * (chosen.time_s.mean / ref.time_s - 1);
  judge_significance(recommendation, settings, reference_index);
  if (pick != best) {
    recommendation.note +=
        fmt::format("; picked the {} of the {} settings within the noise of the best ({})",
                    recommendation.tie_rule, recommendation.band.size(), to_string(settings[best].setting));
  }
  if (max_slowdown) {
    recommendation.note +=
        fmt::format("; only settings at most {}% slower than the reference qualified", *max_slowdown * 100);
  }
  return recommendation;
}

}  // namespace wattwise::analysis
