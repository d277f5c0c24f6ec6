#include "report/phase_instances_json.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace wattwise::report {

std::vector<std::size_t> listed_phase_instances(const std::vector<measure::PhaseInstance>& instances,
                                                std::size_t cap) {
  std::map<std::string_view, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < instances.size(); ++i) by_name[instances[i].phase.name].push_back(i);
  const std::size_t share = std::max(kMinListedPerName, cap / std::max<std::size_t>(by_name.size(), 1));
  std::vector<std::size_t> listed;
  for (const auto& [name, positions] : by_name) {
    const std::size_t n = positions.size();
    if (n <= share) {
      listed.insert(listed.end(), positions.begin(), positions.end());
      continue;
    }
    // k * (n - 1) / (share - 1) for k = 0 .. share - 1: distinct (n > share), the first and the last.
    for (std::size_t k = 0; k < share; ++k) listed.push_back(positions[k * (n - 1) / (share - 1)]);
  }
  std::sort(listed.begin(), listed.end());
  return listed;
}

nlohmann::json phases_by_rank_json(const std::vector<PhaseOccurrence>& occurrences) {
  struct Totals {
    std::size_t count = 0;
    double time_s = 0;
    std::optional<double> energy_j = 0.0;
  };
  std::map<std::pair<std::optional<int>, std::string_view>, Totals> by_rank_and_name;
  for (const auto& o : occurrences) {
    if (o.same_name_depth != 0) continue;  // inside an occurrence of the same name, its energy included
    auto& totals = by_rank_and_name[{o.rank, o.name}];
    totals.count += o.count;
    totals.time_s += o.time_s;
    if (totals.energy_j && o.energy_j) {
      *totals.energy_j += *o.energy_j;
    } else {
      totals.energy_j.reset();
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, totals] : by_rank_and_name)
    out.push_back(
        {{"rank", key.first ? nlohmann::json(*key.first) : nlohmann::json(nullptr)},
         {"name", std::string(key.second)},
         {"count", totals.count},
         {"time_s", totals.time_s},
         {"energy_j", totals.energy_j ? nlohmann::json(*totals.energy_j) : nlohmann::json(nullptr)}});
  return out;
}

}  // namespace wattwise::report
