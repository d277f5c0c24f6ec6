#include "analysis/band.hpp"

#include <cmath>

#include "analysis/statistics.hpp"

namespace wattwise::analysis {
namespace {

struct Spread {
  int n = 0;
  double variance = 0;  // of one run's metric value (n - 1)
};

Spread per_run_spread(const SettingAggregate& aggregate, const ReferencePoint& ref,
                      const MetricSpec& metric) {
  std::vector<double> values;
  for (const RunPoint& run : aggregate.runs)
    values.push_back(metric_value(metric, run.energy_j, run.time_s, ref));
  const Summary summary = summarize(values);
  return {summary.n, summary.stddev ? *summary.stddev * *summary.stddev : 0.0};
}

// Equal within rounding: such settings are in the band even when nothing is known about the noise.
bool same_score(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace

std::vector<MetricEstimate> metric_estimates(const std::vector<SettingAggregate>& settings,
                                             const ReferencePoint& ref, const MetricSpec& metric) {
  std::vector<Spread> spreads;
  double pooled_squares = 0;
  int pooled_df = 0;
  for (const SettingAggregate& s : settings) {
    spreads.push_back(per_run_spread(s, ref, metric));
    if (spreads.back().n >= 2) {
      pooled_squares += (spreads.back().n - 1) * spreads.back().variance;
      pooled_df += spreads.back().n - 1;
    }
  }
  // One run's noise is a property of the job, not of the setting: pooled over every setting with repeats
  // (as the error mean square of a one-way analysis of variance), it has far more degrees of freedom than
  // any one setting's two to five runs, whose own t quantile (6.3 at n = 2) would make the band so wide
  // that settings 10% worse could not be told apart from the best.
  const std::optional<double> pooled_sd =
      pooled_df > 0 ? std::optional<double>(std::sqrt(pooled_squares / pooled_df)) : std::nullopt;
  std::vector<MetricEstimate> estimates;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    MetricEstimate e;
    const double value = metric_value(metric, settings[i].energy_j.mean, settings[i].time_s.mean, ref);
    e.score = metric.higher_is_better() ? -value : value;
    const Spread& spread = spreads[i];
    if (pooled_sd && spread.n >= 1) {
      e.standard_error = *pooled_sd / std::sqrt(static_cast<double>(spread.n));
      e.df = pooled_df;
      e.borrowed = spread.n == 1;
    }
    estimates.push_back(e);
  }
  return estimates;
}

Band indistinguishable_band(const std::vector<MetricEstimate>& estimates, std::size_t best,
                            const std::vector<bool>& eligible) {
  Band band;
  const MetricEstimate& b = estimates.at(best);
  band.known = b.standard_error.has_value();
  for (std::size_t i = 0; i < estimates.size(); ++i) {
    if (i != best && !eligible.at(i)) continue;
    const MetricEstimate& e = estimates[i];
    bool inside = i == best || same_score(e.score, b.score);
    if (!inside && band.known && e.standard_error) {
      const double var_i = *e.standard_error * *e.standard_error;
      const double var_b = *b.standard_error * *b.standard_error;
      const double var = var_i + var_b;
      // Both standard errors come from the one pooled spread, so its degrees of freedom are the test's;
      // with no spread at all only equal scores are inside (above).
      if (var > 0) inside = e.score - b.score <= t_quantile_95(e.df) * std::sqrt(var);
    }
    if (inside) band.members.push_back(i);
  }
  return band;
}

std::size_t pick_in_band(const std::vector<SettingAggregate>& settings,
                         const std::vector<MetricEstimate>& estimates, const Band& band, std::size_t best) {
  const double best_score = estimates.at(best).score;
  const double margin = kTieMargin * std::fabs(best_score);
  std::size_t pick = best;
  for (std::size_t i : band.members)
    if (estimates[i].score - best_score <= margin && settings[i].time_s.mean < settings[pick].time_s.mean)
      pick = i;
  return pick;
}

}  // namespace wattwise::analysis
