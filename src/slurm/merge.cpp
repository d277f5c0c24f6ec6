#include "slurm/merge.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "core/version.hpp"
#include "report/phase_instances_json.hpp"

namespace wattwise::slurm {

namespace {

using nlohmann::json;

// Sums energies where every part is known; one unknown part makes the sum unknown (null), never too small.
struct EnergySum {
  double joules = 0;
  bool known = true;
  void add(const json& value) {
    if (value.is_number())
      joules += value.get<double>();
    else
      known = false;
  }
  json to_json() const { return known ? json(joules) : json(nullptr); }
};

void require(bool ok, const std::string& source, const std::string& what) {
  if (!ok)
    throw data_error(
        fmt::format("{}: {}: is it a `wattwise measure --json` result? (docs/slurm.md)", source, what));
}

// A phase's count in one task: more than a billion iterations is no measurement of ours (and their sum over
// tasks must not overflow).
constexpr std::int64_t kMaxCount = 1000000000;

bool is_int(const json& value) {
  return value.is_number_integer() && value.get<std::int64_t>() >= INT_MIN &&
         value.get<std::int64_t>() <= INT_MAX;
}

void check_measurement(const json& m, const std::string& source) {
  require(m.is_object(), source, "not a JSON object");
  require(m.contains("wall_s") && m.at("wall_s").is_number(), source, "no number 'wall_s'");
  require(m.contains("gpus") && m.at("gpus").is_array(), source, "no array 'gpus'");
  for (const auto& gpu : m.at("gpus"))
    require(gpu.is_object() && gpu.contains("uuid") && gpu.at("uuid").is_string() &&
                gpu.contains("energy_j") && gpu.contains("used_by_job") && gpu.at("used_by_job").is_boolean(),
            source, "a 'gpus' element without 'uuid', 'energy_j' or 'used_by_job'");
  require(!m.contains("complete") || m.at("complete").is_boolean(), source,
          "'complete' is not true or false");
  for (const char* key : {"phases", "phase_instances"})
    require(m.contains(key) && m.at(key).is_array(), source, fmt::format("no array '{}'", key));
  for (const auto& p : m.at("phases"))
    require(p.is_object() && p.contains("name") && p.at("name").is_string() && p.contains("count") &&
                p.at("count").is_number_integer() && p.at("count").get<std::int64_t>() >= 0 &&
                p.at("count").get<std::int64_t>() <= kMaxCount && p.contains("time_s") &&
                p.at("time_s").is_number() && p.contains("energy_j"),
            source, "a 'phases' element without 'name', 'count' (0 to 1e9), 'time_s' or 'energy_j'");
  for (const auto& i : m.at("phase_instances"))
    require(i.is_object() && i.contains("name") && i.at("name").is_string() && i.contains("begin_s") &&
                i.at("begin_s").is_number() && i.contains("end_s") && i.at("end_s").is_number() &&
                i.contains("rank") && (i.at("rank").is_null() || is_int(i.at("rank"))) &&
                i.contains("energy_j") && (!i.contains("same_name_depth") || is_int(i.at("same_name_depth"))),
            source,
            "a 'phase_instances' element without 'name', 'begin_s', 'end_s', 'rank' or 'energy_j', or with "
            "a 'same_name_depth' that is no whole number");
}

// One task's phases per rank: its own `phases_by_rank`, counted over every occurrence (its
// `phase_instances` may list only some of a long job's, report/phase_instances_json.hpp); from the
// instances for a file written before it had one.
json phases_by_rank(const json& m) {
  if (m.contains("phases_by_rank") && m.at("phases_by_rank").is_array()) return m.at("phases_by_rank");
  std::vector<report::PhaseOccurrence> occurrences;
  for (const auto& inst : m.at("phase_instances")) {
    const auto& rank = inst.at("rank");
    const auto& energy = inst.at("energy_j");
    occurrences.push_back({rank.is_number() ? std::optional<int>(rank.get<int>()) : std::nullopt,
                           inst.at("name").get_ref<const std::string&>(), inst.value("same_name_depth", 0),
                           inst.at("end_s").get<double>() - inst.at("begin_s").get<double>(),
                           energy.is_number() ? std::optional<double>(energy.get<double>()) : std::nullopt});
  }
  return report::phases_by_rank_json(occurrences);
}

json task_json(const TaskResult& r) {
  const json& m = r.measurement;
  json gpus = json::array();
  for (const auto& gpu : m.at("gpus"))
    if (gpu.at("used_by_job").get<bool>()) gpus.push_back(gpu.at("uuid"));
  return {{"task_id", r.task.task_id},
          {"local_id", r.task.local_id},
          {"node", r.task.node},
          {"file", r.source},
          {"command", m.value("command", json::array())},
          {"wall_s", m.at("wall_s")},
          {"exit_code", m.value("exit_code", json(nullptr))},
          {"complete", m.value("complete", true)},
          {"energy_j", m.value("energy_j", json(nullptr))},
          {"gpus", gpus},
          {"cuda_visible_devices", to_json(r.task).at("cuda_visible_devices")},
          {"phases", m.at("phases")},
          {"phases_by_rank", phases_by_rank(m)}};
}

// The job's GPUs on one node, each once: of the tasks that measured a GPU, the one that measured it longest.
struct NodeGpu {
  json gpu;
  int task_id = 0;
  double wall_s = 0;
  std::vector<int> measured_by;
};

json node_json(const std::string& node, const std::vector<const TaskResult*>& tasks, json& warnings) {
  std::map<std::string, NodeGpu> gpus;  // by UUID
  std::vector<int> task_ids;
  double wall_s = 0;
  bool complete = true;
  for (const TaskResult* r : tasks) {
    task_ids.push_back(r->task.task_id);
    const double task_wall_s = r->measurement.at("wall_s").get<double>();
    wall_s = std::max(wall_s, task_wall_s);
    complete = complete && r->measurement.value("complete", true);
    for (const auto& gpu : r->measurement.at("gpus")) {
      if (!gpu.at("used_by_job").get<bool>()) continue;
      auto [it, fresh] = gpus.try_emplace(gpu.at("uuid").get<std::string>());
      it->second.measured_by.push_back(r->task.task_id);
      if (fresh || task_wall_s > it->second.wall_s) {
        it->second.gpu = gpu;
        it->second.task_id = r->task.task_id;
        it->second.wall_s = task_wall_s;
      }
    }
  }
  EnergySum energy;
  json gpu_list = json::array();
  for (const auto& [uuid, g] : gpus) {
    energy.add(g.gpu.at("energy_j"));
    gpu_list.push_back({{"uuid", uuid},
                        {"index", g.gpu.value("index", json(nullptr))},
                        {"name", g.gpu.value("name", json(nullptr))},
                        {"energy_j", g.gpu.at("energy_j")},
                        {"method", g.gpu.value("method", json(nullptr))},
                        {"task_id", g.task_id},
                        {"measured_by_tasks", g.measured_by}});
    if (g.measured_by.size() > 1)
      warnings.push_back(fmt::format(
          "node {}: GPU {} was measured by {} tasks (give each task its own GPU, e.g. srun "
          "--gpus-per-task=1, "
          "or run one wattwise per node); the node counts it once, from task {}, and the tasks' own figures "
          "each include it",
          node, uuid, g.measured_by.size(), g.task_id));
  }
  return {{"node", node},         {"tasks", task_ids}, {"wall_s", wall_s}, {"energy_j", energy.to_json()},
          {"complete", complete}, {"gpus", gpu_list}};
}

// The step's phases per name over every task: counts, times and energies added.
json step_phases(const std::vector<TaskResult>& results) {
  struct Totals {
    std::int64_t count = 0;
    double time_s = 0;
    EnergySum energy;
  };
  std::map<std::string, Totals> by_name;
  for (const auto& r : results)
    for (const auto& p : r.measurement.at("phases")) {
      auto& totals = by_name[p.at("name").get<std::string>()];
      totals.count += p.at("count").get<std::int64_t>();
      totals.time_s += p.at("time_s").get<double>();
      totals.energy.add(p.at("energy_j"));
    }
  json out = json::array();
  for (const auto& [name, totals] : by_name)
    out.push_back({{"name", name},
                   {"count", totals.count},
                   {"time_s", totals.time_s},
                   {"energy_j", totals.energy.to_json()}});
  return out;
}

json missing_tasks(const std::vector<TaskResult>& results, std::optional<int> expected) {
  json missing = json::array();
  if (!expected) return missing;
  std::set<int> found;
  for (const auto& r : results) found.insert(r.task.task_id);
  for (int id = 0; id < *expected; ++id)
    if (!found.count(id)) missing.push_back(id);
  return missing;
}

}  // namespace

TaskResult task_result(const json& measurement, const std::string& source) {
  require(measurement.is_object() && measurement.contains("slurm") && measurement.at("slurm").is_object(),
          source, "no 'slurm' object (it was not measured under srun, or with an older wattwise)");
  check_measurement(measurement, source);
  return {source, slurm_task_from_json(measurement.at("slurm"), source), measurement};
}

std::vector<TaskResult> select_step(std::vector<TaskResult> results, const std::optional<std::string>& step) {
  if (results.empty())
    throw usage_error("no task results to merge: give the --out-dir of `wattwise measure`");
  std::map<std::string, std::string> jobs;  // job id -> one of its files
  std::set<std::string> steps;
  for (const auto& r : results) {
    jobs.try_emplace(r.task.job_id, r.source);
    steps.insert(r.task.step_id);
  }
  if (jobs.size() > 1) {
    std::vector<std::string> named;
    for (const auto& [job, file] : jobs) named.push_back(fmt::format("{} ({})", job, file));
    throw usage_error(
        fmt::format("the files are of {} SLURM jobs: {}; merge one job at a time (give only its "
                    "files or its own directory)",
                    jobs.size(), fmt::join(named, ", ")));
  }
  if (step) {
    std::erase_if(results, [&](const TaskResult& r) { return r.task.step_id != *step; });
    if (results.empty())
      throw usage_error(
          fmt::format("--step {}: no file of that step; steps found: {}", *step, fmt::join(steps, ", ")));
  } else if (steps.size() > 1) {
    throw usage_error(fmt::format("the files are of {} steps of job {} ({}): choose one with --step",
                                  steps.size(), jobs.begin()->first, fmt::join(steps, ", ")));
  }
  std::sort(results.begin(), results.end(),
            [](const TaskResult& a, const TaskResult& b) { return a.task.task_id < b.task.task_id; });
  for (std::size_t i = 1; i < results.size(); ++i)
    if (results[i].task.task_id == results[i - 1].task.task_id)
      throw data_error(
          fmt::format("task {} of job {} step {} has two results ({} and {}): remove the stale one",
                      results[i].task.task_id, results[i].task.job_id, results[i].task.step_id,
                      results[i - 1].source, results[i].source));
  return results;
}

json merge_step(const std::vector<TaskResult>& results) {
  const SlurmTask& first = results.at(0).task;
  json warnings = json::array();
  std::map<std::string, std::vector<const TaskResult*>> by_node;
  json tasks = json::array();
  double wall_s = 0;
  bool every_task_complete = true;
  for (const auto& r : results) {
    by_node[r.task.node].push_back(&r);
    tasks.push_back(task_json(r));
    wall_s = std::max(wall_s, r.measurement.at("wall_s").get<double>());
    every_task_complete = every_task_complete && r.measurement.value("complete", true);
  }
  json nodes = json::array();
  EnergySum energy;
  for (const auto& [node, node_tasks] : by_node) {
    nodes.push_back(node_json(node, node_tasks, warnings));
    energy.add(nodes.back().at("energy_j"));
  }
  const json missing = missing_tasks(results, first.tasks);
  if (!missing.empty())
    warnings.push_back(
        fmt::format("{} of the step's {} tasks have no result (tasks {}): their energy is not in "
                    "the total",
                    missing.size(), *first.tasks, missing.dump()));
  return {{"tool", "wattwise"},
          {"version", kVersion},
          {"kind", "slurm-merge"},
          {"job_id", first.job_id},
          {"step_id", first.step_id},
          {"tasks_expected", first.tasks ? json(*first.tasks) : json(nullptr)},
          {"nodes_expected", first.nodes ? json(*first.nodes) : json(nullptr)},
          {"missing_tasks", missing},
          {"complete", missing.empty() && every_task_complete},
          {"wall_s", wall_s},
          {"energy_j", energy.to_json()},
          {"nodes", nodes},
          {"tasks", tasks},
          {"phases", step_phases(results)},
          {"warnings", warnings}};
}

}  // namespace wattwise::slurm
