#pragma once

#include <optional>

namespace wattwise {

// The node's energy over a span of a job (a run, or the time of one of its phases), by part: every
// measured GPU (the job's and idle ones) and the node sources beside them. Each part is absent where it
// was not measured or its readings did not cover the span. One type for the layers that carry it (measure
// computes it, the store keeps it, the analysis judges on it: docs/energy-scope.md).
struct NodeParts {
  std::optional<double> gpus_j;         // every measured GPU together
  std::optional<double> cpu_package_j;  // the CPU packages (powercap), summed
  std::optional<double> dram_j;         // the DRAM zones, summed
  std::optional<double> meter_j;        // an external meter (--meter-cmd): the node at the wall
};

// Adds `part` to `sum`, for sums where one missing part makes the whole unknown: the first call sets the
// sum to the part (known or not), later ones add to a known sum or leave it unknown. `first` is the
// caller's flag, true before the first part.
inline void add_part(std::optional<double>& sum, bool& first, const std::optional<double>& part) {
  if (first) {
    sum = part;
    first = false;
  } else if (sum && part) {
    *sum += *part;
  } else {
    sum.reset();
  }
}

}  // namespace wattwise
