#pragma once

#include <optional>
#include <span>
#include <vector>

namespace wattwise::analysis {

// Spread of repeated measurements of one quantity.
struct Summary {
  int n = 0;
  double mean = 0;
  std::optional<double> stddev;     // sample standard deviation (n - 1); absent with one value
  std::optional<double> ci95_half;  // half-width of the 95% confidence interval of the mean (Student t)
};

Summary summarize(std::span<const double> values);

// Quantile of Student's t with `df` degrees of freedom: t such that P(T <= t) = probability, from
// Boost.Math, for any real df (Welch's fractional degrees of freedom included). df below 1 is taken as 1.
double students_t_quantile(double probability, double df);

// Quantile of Fisher's F with (df1, df2) degrees of freedom, from Boost.Math: f such that P(F <= f) =
// probability. Both df must be positive.
double f_quantile(double probability, double df1, double df2);

// Two-sided 95% quantile (P(|T| <= t) = 0.95): students_t_quantile(0.975, df).
double t_quantile_975(double df);

// One-sided 95% quantile (P(T <= t) = 0.95): students_t_quantile(0.95, df).
double t_quantile_95(double df);

// Welch's two-sample t-test at 95%: do the means of `a` and `b` differ by more than the noise?
// Absent when either side has fewer than two values (no repeats: significance unknown).
std::optional<bool> welch_differs(std::span<const double> a, std::span<const double> b);

// One-way analysis of variance at 95%: do the means of the groups differ by more than the noise within
// them (F-test)? This asks the question before any one group is picked out, so it holds its 5% false-claim
// rate however many groups there are; a test of the best-looking group against one other does not (picking
// the lowest of 31 identical means and testing it claims a difference far more often). Absent when fewer than
// two groups hold values or no group has two (no spread within groups to judge by).
std::optional<bool> anova_differs(const std::vector<std::vector<double>>& groups);

}  // namespace wattwise::analysis
