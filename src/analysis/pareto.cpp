#include "analysis/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace wattwise::analysis {

std::vector<bool> pareto_front(const std::vector<SettingAggregate>& settings) {
  const auto time = [&](std::size_t i) { return settings[i].time_s.mean; };
  const auto energy = [&](std::size_t i) { return settings[i].energy_j.mean; };
  std::vector<std::size_t> order(settings.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return time(a) != time(b) ? time(a) < time(b) : energy(a) < energy(b);
  });
  // Sweep by increasing time. A point is dominated when a strictly faster point already used no more energy,
  // or a point as fast used strictly less.
  std::vector<bool> front(settings.size(), false);
  double lowest_faster = std::numeric_limits<double>::infinity();
  for (std::size_t begin = 0; begin < order.size();) {
    std::size_t end = begin;
    while (end < order.size() && time(order[end]) == time(order[begin])) ++end;
    const double lowest_here = energy(order[begin]);  // sorted by energy within equal time
    if (lowest_here < lowest_faster) {
      for (std::size_t j = begin; j < end && energy(order[j]) == lowest_here; ++j) front[order[j]] = true;
    }
    lowest_faster = std::min(lowest_faster, lowest_here);
    begin = end;
  }
  return front;
}

}  // namespace wattwise::analysis
