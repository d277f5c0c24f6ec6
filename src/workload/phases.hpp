#pragma once

#include <vector>

#include "workload/marker.hpp"

namespace wattwise::workload {

struct PhaseSet {
  std::vector<Phase> phases;  // sorted by begin time, then by end time (outer before inner)
  int unmatched_begins = 0;   // begins still open when the markers ran out (job crashed or forgot)
  int unmatched_ends = 0;     // ends without a begin of the same (pid, rank, name), or before that begin
};

// Pairs begin and end markers per (pid, rank, name), in arrival order. Phases of one name may nest
// (a stack per name): an end closes the innermost open begin; Phase::same_name_depth says how many paired
// phases of the same name contain it. An end timestamped before the begin it would close is counted as
// unmatched, never paired. A point becomes a zero-length phase. A phase's counters are its begin's counters
// overwritten by its end's.
PhaseSet build_phases(const std::vector<Marker>& markers);

// Markers the job's processes dropped (their queue to wattwise was full), as their later markers report:
// per process the largest count, summed. Markers dropped after a process's last marker stay unknown.
long long dropped_by_job(const std::vector<Marker>& markers);

}  // namespace wattwise::workload
