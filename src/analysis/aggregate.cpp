#include "analysis/aggregate.hpp"

#include <algorithm>
#include <iterator>
#include <map>

namespace wattwise::analysis {
namespace {

struct Group {
  Setting setting;
  std::vector<const RunRecord*> runs;
};

// Groups with same_setting (tolerant), so 150 and 150.0000000001 from different sources are one setting.
std::vector<Group> group_by_setting(const std::vector<RunRecord>& runs) {
  std::vector<Group> groups;
  std::map<Setting, std::size_t> exact;  // fast path: repeats usually carry bit-identical values
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    auto index = exact.find(run.setting);
    if (index == exact.end()) {
      const auto tolerant = std::find_if(
          groups.begin(), groups.end(), [&](const Group& g) { return same_setting(g.setting, run.setting); });
      const auto position = static_cast<std::size_t>(std::distance(groups.begin(), tolerant));
      if (tolerant == groups.end()) groups.push_back({run.setting, {}});
      index = exact.emplace(run.setting, position).first;
    }
    groups[index->second].runs.push_back(&run);
  }
  std::sort(groups.begin(), groups.end(),
            [](const Group& a, const Group& b) { return a.setting < b.setting; });
  return groups;
}

std::optional<Summary> summarize_present(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return summarize(values);
}

SettingAggregate summarize_group(const Group& group) {
  SettingAggregate aggregate;
  aggregate.setting = group.setting;
  std::vector<double> energy, time, power, j_per_sample, gflops_per_w;
  double uncertainty_sum = 0;
  bool every_bar_known = true;
  for (const RunRecord* run : group.runs) {
    if (run->energy_uncertainty_j)
      uncertainty_sum += *run->energy_uncertainty_j;
    else
      every_bar_known = false;
    aggregate.runs.push_back({run->time_s, run->energy_j});
    energy.push_back(run->energy_j);
    time.push_back(run->time_s);
    power.push_back(run->energy_j / run->time_s);
    if (run->work && *run->work > 0) j_per_sample.push_back(run->energy_j / *run->work);
    if (run->flops && run->energy_j > 0) gflops_per_w.push_back(*run->flops / run->energy_j / 1e9);
    const auto& labels = aggregate.labels;
    if (!run->label.empty() && std::find(labels.begin(), labels.end(), run->label) == labels.end()) {
      aggregate.labels.push_back(run->label);
    }
  }
  aggregate.energy_j = summarize(energy);
  aggregate.time_s = summarize(time);
  aggregate.power_w = summarize(power);
  aggregate.j_per_sample = summarize_present(j_per_sample);
  aggregate.gflops_per_w = summarize_present(gflops_per_w);
  if (every_bar_known && !group.runs.empty())
    aggregate.energy_uncertainty_j = uncertainty_sum / static_cast<double>(group.runs.size());
  return aggregate;
}

}  // namespace

std::vector<SettingAggregate> aggregate_runs(const std::vector<RunRecord>& runs) {
  std::vector<SettingAggregate> aggregates;
  for (const Group& group : group_by_setting(runs)) aggregates.push_back(summarize_group(group));
  return aggregates;
}

}  // namespace wattwise::analysis
