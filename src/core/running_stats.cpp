#include "core/running_stats.hpp"

#include <algorithm>
#include <cmath>

namespace wattwise {

void RunningStats::add(double value) {
  ++count_;
  const double delta = value - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (value - mean_);
  min_ = count_ == 1 ? value : std::min(min_, value);
  max_ = count_ == 1 ? value : std::max(max_, value);
}

std::optional<double> RunningStats::mean() const {
  if (count_ == 0) return std::nullopt;
  return mean_;
}

std::optional<double> RunningStats::min() const {
  if (count_ == 0) return std::nullopt;
  return min_;
}

std::optional<double> RunningStats::max() const {
  if (count_ == 0) return std::nullopt;
  return max_;
}

std::optional<double> RunningStats::stddev() const {
  if (count_ < 2) return std::nullopt;
  return std::sqrt(std::max(m2_, 0.0) / static_cast<double>(count_ - 1));
}

std::optional<double> RunningStats::cv() const {
  const auto sd = stddev();
  if (!sd || mean_ == 0) return std::nullopt;
  return *sd / std::fabs(mean_);
}

}  // namespace wattwise
