#pragma once

// The occurrences of a job's phases in the measure JSON, bounded: a job that marks every iteration for a
// month has tens of millions, and a JSON of gigabytes is of use to nobody. Every name keeps its first and
// last occurrence and others evenly spread between, up to a share of kMaxListedPhaseInstances; the JSON says
// how many it left out, and the figures that need every occurrence (the phases' totals, means and CVs, the
// per-rank totals) are computed from all of them before the list is cut.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "measure/measurement.hpp"

namespace wattwise::report {

inline constexpr std::size_t kMaxListedPhaseInstances = 20000;  // ~8 MB of JSON
inline constexpr std::size_t kMinListedPerName = 100;           // however many names share the list

// The positions in `instances` to list, ascending: for each name, all of its occurrences when they fit its
// share (cap / names, at least kMinListedPerName), else that many evenly spread, its first and last
// included.
std::vector<std::size_t> listed_phase_instances(const std::vector<measure::PhaseInstance>& instances,
                                                std::size_t cap = kMaxListedPhaseInstances);

// One occurrence as the per-rank totals see it.
struct PhaseOccurrence {
  std::optional<int> rank;
  std::string_view name;
  int same_name_depth = 0;
  double time_s = 0;
  std::optional<double> energy_j;
  std::size_t count = 1;  // more than one: the totals of that many (a long job's folded ones)
};

// Per (rank, name), the outermost occurrences' `count`, `time_s` and `energy_j` (null when one lacks it),
// as `phases` counts them: the measure JSON's `phases_by_rank` and `wattwise merge`'s per task.
nlohmann::json phases_by_rank_json(const std::vector<PhaseOccurrence>& occurrences);

}  // namespace wattwise::report
