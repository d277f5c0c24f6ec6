#include "analysis/statistics.hpp"

#include <algorithm>
#include <cmath>

#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/students_t.hpp>

namespace wattwise::analysis {
namespace {

struct Moments {
  int n = 0;
  double mean = 0;
  double variance = 0;  // sample variance, n - 1
};

Moments moments(std::span<const double> values) {
  Moments m;
  m.n = static_cast<int>(values.size());
  if (m.n == 0) return m;
  double sum = 0;
  for (double v : values) sum += v;
  m.mean = sum / m.n;
  if (m.n < 2) return m;
  double squares = 0;
  for (double v : values) squares += (v - m.mean) * (v - m.mean);
  m.variance = squares / (m.n - 1);
  return m;
}

}  // namespace

Summary summarize(std::span<const double> values) {
  const Moments m = moments(values);
  Summary summary{m.n, m.mean, std::nullopt, std::nullopt};
  if (m.n >= 2) {
    summary.stddev = std::sqrt(m.variance);
    summary.ci95_half = t_quantile_975(m.n - 1) * *summary.stddev / std::sqrt(static_cast<double>(m.n));
  }
  return summary;
}

double students_t_quantile(double probability, double df) {
  // Below one degree of freedom the interval is not worth having; one is the widest we state (12.7 at 97.5%).
  const boost::math::students_t distribution(std::max(df, 1.0));
  return boost::math::quantile(distribution, probability);
}

double f_quantile(double probability, double df1, double df2) {
  return boost::math::quantile(boost::math::fisher_f(df1, df2), probability);
}

double t_quantile_975(double df) { return students_t_quantile(0.975, df); }

double t_quantile_95(double df) { return students_t_quantile(0.95, df); }

std::optional<bool> welch_differs(std::span<const double> a, std::span<const double> b) {
  const Moments ma = moments(a);
  const Moments mb = moments(b);
  if (ma.n < 2 || mb.n < 2) return std::nullopt;
  const double va = ma.variance / ma.n;
  const double vb = mb.variance / mb.n;
  // No spread at all: any difference in the means is beyond the (zero) noise.
  if (va + vb == 0) return ma.mean != mb.mean;
  const double t = (ma.mean - mb.mean) / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) / (va * va / (ma.n - 1) + vb * vb / (mb.n - 1));
  return std::fabs(t) > t_quantile_975(df);
}

std::optional<bool> anova_differs(const std::vector<std::vector<double>>& groups) {
  std::size_t k = 0, n = 0;
  double sum = 0;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    ++k;
    n += g.size();
    for (double v : g) sum += v;
  }
  if (k < 2 || n <= k) return std::nullopt;
  const double grand = sum / static_cast<double>(n);
  double between = 0, within = 0;
  for (const auto& g : groups) {
    if (g.empty()) continue;
    const Moments m = moments(g);
    between += static_cast<double>(m.n) * (m.mean - grand) * (m.mean - grand);
    for (double v : g) within += (v - m.mean) * (v - m.mean);
  }
  const double df_between = static_cast<double>(k - 1);
  const double df_within = static_cast<double>(n - k);
  // No spread within groups: any difference between their means is beyond the (zero) noise.
  if (within == 0) return between > 0;
  const double f = (between / df_between) / (within / df_within);
  return f > f_quantile(0.95, df_between, df_within);
}

}  // namespace wattwise::analysis
