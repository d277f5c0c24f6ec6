#include "analysis/statistics.hpp"

#include <array>
#include <cmath>

namespace wattwise::analysis {
namespace {

constexpr std::array<double, 30> kT975 = {
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
    2.120,  2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

// One-sided 95% (two-sided 90%) quantiles of Student's t, df 1..30.
constexpr std::array<double, 30> kT95 = {
    6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771, 1.761, 1.753,
    1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706, 1.703, 1.701, 1.699, 1.697};

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

double t_quantile_975(double df) {
  const double whole = std::floor(df);
  if (whole < 1) return kT975[0];
  if (whole <= 30) return kT975[static_cast<std::size_t>(whole) - 1];
  constexpr double z = 1.959964;
  return z + (z * z * z + z) / (4 * whole);
}

double t_quantile_95(double df) {
  const double whole = std::floor(df);
  if (whole < 1) return kT95[0];
  if (whole <= 30) return kT95[static_cast<std::size_t>(whole) - 1];
  constexpr double z = 1.644854;
  return z + (z * z * z + z) / (4 * whole);
}

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

}  // namespace wattwise::analysis
