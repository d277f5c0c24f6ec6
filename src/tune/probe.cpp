#include "tune/probe.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/statistics.hpp"

namespace wattwise::tune {

namespace {

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

// Sum of squared deviations of `values` about their mean.
double squared_deviations(const std::vector<double>& values) {
  const double mean = mean_of(values);
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return ss;
}

// Sum of the products of neighbouring deviations about the mean: with the squared deviations, the lag-1
// autocorrelation of the sequence.
double lag_products(const std::vector<double>& values) {
  const double mean = mean_of(values);
  double sp = 0;
  for (std::size_t i = 1; i < values.size(); ++i) sp += (values[i] - mean) * (values[i - 1] - mean);
  return sp;
}

// Half-width of the interval of a mean of n values whose spread is sqrt(ss / df) and whose neighbours are
// correlated by lag_sp / ss. Neighbouring iterations of a GPU job are alike (clocks and temperature wander
// over seconds), which makes n of them worth fewer independent ones: the variance of their mean is that of
// independent ones times (1 + rho) / (1 - rho) for a first-order autoregression. rho is taken at 0 when
// negative and at most 0.9.
double half_width(double ss, double lag_sp, double df, double n, double confidence) {
  if (df < 1 || n <= 0 || ss <= 0) return 0;
  const double rho = std::clamp(lag_sp / ss, 0.0, 0.9);
  return t_quantile(confidence, df) * std::sqrt(ss / df) / std::sqrt(n) * std::sqrt((1 + rho) / (1 - rho));
}

}  // namespace

double t_quantile(double confidence, double df) {
  // Two-sided: the interval leaves (1 - confidence) / 2 in each tail.
  return analysis::students_t_quantile((1 + confidence) / 2, df);
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
  e.value = value_;
  e.iterations = energies_j_.size();
  e.mean_time_s = mean_of(times_s_);
  e.mean_energy_j = mean_of(energies_j_);
  e.score = sign * analysis::metric_value(metric, e.mean_energy_j, e.mean_time_s, ref);
  // The interval comes from the per-iteration metric values: their spread is the noise of one iteration of
  // this job at this setting, whatever the metric mixes (energy, time or both).
  std::vector<double> per_iteration;
  per_iteration.reserve(energies_j_.size());
  for (std::size_t i = 0; i < energies_j_.size(); ++i)
    per_iteration.push_back(sign * analysis::metric_value(metric, energies_j_[i], paired_time_s_[i], ref));
  const double n = static_cast<double>(e.iterations);
  e.df = n - 1;
  e.score_ss = squared_deviations(per_iteration);
  e.score_lag_sp = lag_products(per_iteration);
  e.score_half = half_width(e.score_ss, e.score_lag_sp, e.df, n, confidence);
  const double n_time = static_cast<double>(times_s_.size());
  e.time_df = n_time - 1;
  const double mean_squared_s2 = e.mean_time_s * e.mean_time_s;
  e.time_ss_relative = squared_deviations(times_s_) / mean_squared_s2;
  e.time_lag_sp_relative = lag_products(times_s_) / mean_squared_s2;
  e.time_half_s =
      e.mean_time_s * half_width(e.time_ss_relative, e.time_lag_sp_relative, e.time_df, n_time, confidence);
  return e;
}

void NoisePool::add(const ProbeEstimate& e) {
  score_ss_ += e.score_ss;
  score_lag_sp_ += e.score_lag_sp;
  df_ += std::max(0.0, e.df);
  time_ss_relative_ += e.time_ss_relative;
  time_lag_sp_relative_ += e.time_lag_sp_relative;
  time_df_ += std::max(0.0, e.time_df);
}

ProbeEstimate NoisePool::pooled(const ProbeEstimate& e, double confidence,
                                double reference_iterations) const {
  ProbeEstimate p = e;
  const double df = df_ + std::max(0.0, e.df);
  const double time_df = time_df_ + std::max(0.0, e.time_df);
  // The difference of two means: its variance is the sum of theirs, as of one mean of n_eff iterations.
  double n = static_cast<double>(e.iterations);
  if (reference_iterations > 0 && n > 0) n = 1 / (1 / n + 1 / reference_iterations);
  p.score_half = half_width(score_ss_ + e.score_ss, score_lag_sp_ + e.score_lag_sp, df, n, confidence);
  p.time_half_s = e.mean_time_s * half_width(time_ss_relative_ + e.time_ss_relative,
                                             time_lag_sp_relative_ + e.time_lag_sp_relative, time_df,
                                             static_cast<double>(e.time_df + 1), confidence);
  return p;
}

}  // namespace wattwise::tune
