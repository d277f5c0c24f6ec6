#pragma once

#include <span>

namespace wattwise::analysis {

// y = a + b*x + c*x^2 fitted by least squares, e.g. energy against power limit, for the report's curves.
struct QuadraticFit {
  double a = 0;
  double b = 0;
  double c = 0;
  double r_squared = 0;  // 1 - SS_res / SS_tot; 1 when the data has no spread and the fit is exact
  double x_min = 0;      // the data range the fit is valid in
  double x_max = 0;
  double optimum_x = 0;  // where the fitted curve is lowest within [x_min, x_max] (vertex or an end)
  double optimum_y = 0;

  double operator()(double x) const { return a + b * x + c * x * x; }
};

// Needs at least three distinct x values (else a data_error) and as many y as x (else an internal error).
QuadraticFit fit_quadratic(std::span<const double> xs, std::span<const double> ys);

}  // namespace wattwise::analysis
