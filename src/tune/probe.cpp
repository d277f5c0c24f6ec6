#include "tune/probe.hpp"

#include <cmath>

#include "analysis/statistics.hpp"

namespace wattwise::tune {

namespace {

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Half-width of the interval of the mean of `values` (0 with fewer than two).
double half_width(const std::vector<double>& values, double confidence) {
  const auto summary = analysis::summarize(values);
  if (!summary.stddev) return 0;
  const double n = static_cast<double>(summary.n);
  return t_quantile(confidence, n - 1) * *summary.stddev / std::sqrt(n);
}

}  // namespace

double t_quantile(double confidence, double df) {
  // 0.90 two-sided is the one-sided 0.95 quantile.
  return confidence < 0.925 ? analysis::t_quantile_95(df) : analysis::t_quantile_975(df);
}

void Probe::add(double time_s, std::optional<double> energy_j) {
  times_s_.push_back(time_s);
  if (energy_j) {
    paired_time_s_.push_back(time_s);
    energies_j_.push_back(*energy_j);
  }
}

std::optional<analysis::ReferencePoint> Probe::reference() const {
  if (energies_j_.empty()) return std::nullopt;
  return analysis::ReferencePoint{mean_of(energies_j_), mean_of(times_s_)};
}

std::optional<ProbeEstimate> Probe::estimate(const analysis::MetricSpec& metric,
                                             const analysis::ReferencePoint& ref, double confidence) const {
  if (energies_j_.empty()) return std::nullopt;
  const double sign = metric.higher_is_better() ? -1.0 : 1.0;
  ProbeEstimate e;
  e.iterations = energies_j_.size();
  e.mean_time_s = mean_of(times_s_);
  e.time_half_s = half_width(times_s_, confidence);
  e.mean_energy_j = mean_of(energies_j_);
  e.score = sign * analysis::metric_value(metric, e.mean_energy_j, e.mean_time_s, ref);
  // The interval comes from the per-iteration metric values: their spread is the noise of one iteration of
  // this job at this setting, whatever the metric mixes (energy, time or both).
  std::vector<double> per_iteration;
  per_iteration.reserve(energies_j_.size());
  for (std::size_t i = 0; i < energies_j_.size(); ++i)
    per_iteration.push_back(sign * analysis::metric_value(metric, energies_j_[i], paired_time_s_[i], ref));
  e.score_half = half_width(per_iteration, confidence);
  return e;
}

}  // namespace wattwise::tune
