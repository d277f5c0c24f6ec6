#pragma once

#include <optional>
#include <span>

namespace wattwise::analysis {

// Spread of repeated measurements of one quantity.
struct Summary {
  int n = 0;
  double mean = 0;
  std::optional<double> stddev;     // sample standard deviation (n - 1); absent with one value
  std::optional<double> ci95_half;  // half-width of the 95% confidence interval of the mean (Student t)
};

Summary summarize(std::span<const double> values);

// Two-sided 95% quantile of Student's t with `df` degrees of freedom (t such that P(|T| <= t) = 0.95):
// table for df 1..30, beyond it the normal quantile with its first-order correction 1.96 + (z^3 + z) / (4
// df). A fractional df (Welch) is rounded down, which makes the interval slightly wider, never narrower.
double t_quantile_975(double df);

// One-sided 95% quantile of Student's t (P(T <= t) = 0.95), in the same way: table for df 1..30, beyond it
// 1.645 + (z^3 + z) / (4 df); a fractional df is rounded down.
double t_quantile_95(double df);

// Welch's two-sample t-test at 95%: do the means of `a` and `b` differ by more than the noise?
// Absent when either side has fewer than two values (no repeats: significance unknown).
std::optional<bool> welch_differs(std::span<const double> a, std::span<const double> b);

}  // namespace wattwise::analysis
