#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::workload {

enum class MarkerKind { kBegin, kEnd, kPoint };

// One message from the job: "phase `name` begins/ends/happened at t", with optional counters such as
// samples=128 or flops=4.1e12. `t` is the sender's CLOCK_MONOTONIC time.
struct Marker {
  Nanos t{0};
  MarkerKind kind = MarkerKind::kPoint;
  std::string name;
  std::map<std::string, double> counters;
  int pid = 0;
  std::optional<int> rank;  // data-parallel rank, when the job says
  // Markers this process had dropped before this one (its queue to wattwise was full), as the client
  // counts them; absent when none were.
  std::optional<long long> dropped_before;
};

// A begin/end pair matched up (or a point, where begin == end).
struct Phase {
  std::string name;
  Nanos begin{0};
  Nanos end{0};
  std::map<std::string, double> counters;  // merged from its begin and end markers
  int pid = 0;
  std::optional<int> rank;
  // How many phases of the same (pid, rank, name) enclose this one: 0 for the outermost. A phase's totals
  // count the outermost occurrences only, so a "step" inside a "step" is not counted twice.
  int same_name_depth = 0;
};

}  // namespace wattwise::workload
