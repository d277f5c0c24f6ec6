#include "workload/phases.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace wattwise::workload {
namespace {

// Ranks are optional: a job without ranks gets -1, which no real rank uses.
using PhaseKey = std::tuple<int, int, std::string>;

PhaseKey key_of(const Marker& marker) {
  return {marker.pid, marker.rank.value_or(-1), marker.name};
}

Phase phase_from(const Marker& begin, Nanos end) {
  return Phase{begin.name, begin.t, end, begin.counters, begin.pid, begin.rank};
}

// Sets same_name_depth: how many paired phases of the same (pid, rank, name) contain each one. `phases` is
// sorted by begin, then outer before inner, so per key a stack of the enclosing phases' ends suffices.
void mark_same_name_nesting(std::vector<Phase>& phases) {
  std::map<PhaseKey, std::vector<Nanos>> enclosing_ends;
  for (Phase& phase : phases) {
    auto& ends = enclosing_ends[PhaseKey{phase.pid, phase.rank.value_or(-1), phase.name}];
    while (!ends.empty() && ends.back() < phase.end) ends.pop_back();
    phase.same_name_depth = static_cast<int>(ends.size());
    ends.push_back(phase.end);
  }
}

}  // namespace

PhaseSet build_phases(const std::vector<Marker>& markers) {
  PhaseSet result;
  std::map<PhaseKey, std::vector<const Marker*>> open_begins;
  for (const Marker& marker : markers) {
    switch (marker.kind) {
      case MarkerKind::kPoint:
        result.phases.push_back(phase_from(marker, marker.t));
        break;
      case MarkerKind::kBegin:
        open_begins[key_of(marker)].push_back(&marker);
        break;
      case MarkerKind::kEnd: {
        auto& stack = open_begins[key_of(marker)];
        // An end timestamped before the begin it would close cannot be a phase (a clock read on another
        // machine, a bug in the job): it is counted with the unmatched ends and the begin stays open.
        if (stack.empty() || marker.t < stack.back()->t) {
          ++result.unmatched_ends;
          break;
        }
        Phase phase = phase_from(*stack.back(), marker.t);
        stack.pop_back();
        for (const auto& [key, value] : marker.counters) phase.counters[key] = value;
        result.phases.push_back(std::move(phase));
        break;
      }
    }
  }
  for (const auto& [key, stack] : open_begins) result.unmatched_begins += static_cast<int>(stack.size());
  std::stable_sort(result.phases.begin(), result.phases.end(), [](const Phase& a, const Phase& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.end > b.end;
  });
  mark_same_name_nesting(result.phases);
  return result;
}

long long dropped_by_job(const std::vector<Marker>& markers) {
  std::map<int, long long> per_pid;
  for (const Marker& marker : markers)
    if (marker.dropped_before) per_pid[marker.pid] = std::max(per_pid[marker.pid], *marker.dropped_before);
  long long sum = 0;
  for (const auto& [pid, dropped] : per_pid) sum += dropped;
  return sum;
}

}  // namespace wattwise::workload
