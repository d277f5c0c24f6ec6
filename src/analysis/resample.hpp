#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace wattwise::analysis {

// A quantity sampled over time: time_s ascending, one value per time. Runs of one setting are sampled at
// different instants and end at different times, so before averaging them they go onto one grid.
struct TimeSeries {
  std::vector<double> time_s;
  std::vector<double> value;
};

// `points` evenly spaced times from 0 to end_s inclusive (points >= 2, end_s > 0; else an internal error).
std::vector<double> uniform_grid(double end_s, std::size_t points);

// Linear interpolation of `series` at each grid time. Outside [first, last] sample time there is no data,
// and the result is absent there rather than extrapolated: a run that ended has no power, not 0 W.
std::vector<std::optional<double>> resample_linear(const TimeSeries& series, std::span<const double> grid_s);

// Cumulative integral (trapezoid) of a power series in W: energy in J since the first sample, same times.
TimeSeries cumulative_energy_j(const TimeSeries& power_w);

// Mean and spread across runs at each grid point, using only the runs that have data there (masked).
struct MaskedStats {
  std::vector<std::optional<double>> mean;  // absent where no run has data
  std::vector<std::optional<double>>
      stddev;                      // sample std (n - 1); absent where fewer than two runs have data
  std::vector<std::size_t> count;  // runs with data at each point
};

// All series must have the same length (the grid's); else an internal error.
MaskedStats masked_mean_std(const std::vector<std::vector<std::optional<double>>>& series);

}  // namespace wattwise::analysis
