#pragma once

#include <vector>

#include "analysis/aggregate.hpp"

namespace wattwise::analysis {

// Flags the settings on the Pareto front of (mean time, mean energy), both minimised: a setting is on the
// front unless another one is no worse in both and strictly better in one. Identical points are all on it.
std::vector<bool> pareto_front(const std::vector<SettingAggregate>& settings);

}  // namespace wattwise::analysis
