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
        if (stack.empty()) {
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
  return result;
}

}  // namespace wattwise::workload
