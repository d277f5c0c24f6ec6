// The merge of one SLURM job step's per-task results: selection of the step, per-node and total energy,
// phases per task and rank, and what it refuses.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "slurm/merge.hpp"

namespace wattwise::slurm {
namespace {

using nlohmann::json;

json gpu(const std::string& uuid, json energy_j, bool used = true) {
  return {{"index", 0},           {"uuid", uuid},        {"name", "H100"},
          {"energy_j", energy_j}, {"method", "counter"}, {"used_by_job", used}};
}

json instance(const std::string& name, json rank, double begin_s, double end_s, json energy_j,
              int depth = 0) {
  return {{"name", name},   {"rank", rank},         {"begin_s", begin_s},
          {"end_s", end_s}, {"energy_j", energy_j}, {"same_name_depth", depth}};
}

std::string fmt_file(const std::string& job, const std::string& step, int task_id) {
  return "job-" + job + ".step-" + step + ".task-" + std::to_string(task_id) + ".json";
}

// A task's measure JSON: its GPUs, its phases (name -> count, time, energy) and instances.
TaskResult task(const std::string& job, const std::string& step, const std::string& node, int task_id,
                int tasks, double wall_s, json gpus, json phases = json::array(),
                json instances = json::array()) {
  SlurmTask t;
  t.job_id = job;
  t.step_id = step;
  t.node = node;
  t.task_id = task_id;
  t.tasks = tasks;
  double energy_j = 0;
  for (const auto& g : gpus)
    if (g.at("used_by_job").get<bool>() && g.at("energy_j").is_number())
      energy_j += g.at("energy_j").get<double>();
  json m = {{"wall_s", wall_s},
            {"exit_code", 0},
            {"complete", true},
            {"energy_j", energy_j},
            {"gpus", gpus},
            {"phases", phases},
            {"phase_instances", instances},
            {"slurm", to_json(t)}};
  return task_result(m, fmt_file(job, step, task_id));
}

ErrorKind kind_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::kInternal;
}

TEST(SlurmMerge, FilesOfTwoJobsAreRefusedNamingBothJobs) {
  std::vector<TaskResult> results = {task("100", "0", "n1", 0, 2, 1, json::array({gpu("A", 10)})),
                                     task("101", "0", "n1", 1, 2, 1, json::array({gpu("B", 10)}))};
  std::string message;
  EXPECT_EQ(kind_of([&] { select_step(results, std::nullopt); }, &message), ErrorKind::kUsage);
  EXPECT_NE(message.find("100 (job-100.step-0.task-0.json)"), std::string::npos) << message;
  EXPECT_NE(message.find("101 (job-101.step-0.task-1.json)"), std::string::npos) << message;
  EXPECT_NE(message.find("one job at a time"), std::string::npos) << message;
}

TEST(SlurmMerge, SeveralStepsNeedStepAndStepChoosesOne) {
  std::vector<TaskResult> results = {task("100", "0", "n1", 0, 1, 1, json::array({gpu("A", 10)})),
                                     task("100", "1", "n1", 0, 1, 2, json::array({gpu("A", 20)}))};
  std::string message;
  EXPECT_EQ(kind_of([&] { select_step(results, std::nullopt); }, &message), ErrorKind::kUsage);
  EXPECT_NE(message.find("--step"), std::string::npos) << message;
  const auto chosen = select_step(results, std::string("1"));
  ASSERT_EQ(chosen.size(), 1u);
  EXPECT_EQ(merge_step(chosen).at("energy_j").get<double>(), 20);
  EXPECT_EQ(kind_of([&] { select_step(results, std::string("7")); }), ErrorKind::kUsage);
}

TEST(SlurmMerge, TwoResultsOfOneTaskAreADataError) {
  std::vector<TaskResult> results = {task("100", "0", "n1", 0, 2, 1, json::array({gpu("A", 10)})),
                                     task("100", "0", "n1", 0, 2, 1, json::array({gpu("A", 10)}))};
  EXPECT_EQ(kind_of([&] { select_step(results, std::nullopt); }), ErrorKind::kData);
}

TEST(SlurmMerge, NodeEnergyAddsItsTasksGpusAndTheTotalAddsTheNodes) {
  const auto merged = merge_step(
      select_step({task("7", "0", "n2", 2, 3, 5.0, json::array({gpu("C", 300)})),
                   task("7", "0", "n1", 0, 3, 4.0, json::array({gpu("A", 100), gpu("idle", 999, false)})),
                   task("7", "0", "n1", 1, 3, 4.5, json::array({gpu("B", 200)}))},
                  std::nullopt));
  EXPECT_TRUE(merged.at("complete").get<bool>());
  ASSERT_EQ(merged.at("nodes").size(), 2u);
  const auto& n1 = merged.at("nodes")[0];
  EXPECT_EQ(n1.at("node"), "n1");
  EXPECT_DOUBLE_EQ(n1.at("energy_j").get<double>(), 300);  // A + B; the idle GPU is not the job's
  EXPECT_DOUBLE_EQ(n1.at("wall_s").get<double>(), 4.5);
  EXPECT_EQ(n1.at("tasks"), json::array({0, 1}));
  EXPECT_DOUBLE_EQ(merged.at("nodes")[1].at("energy_j").get<double>(), 300);
  EXPECT_DOUBLE_EQ(merged.at("energy_j").get<double>(), 600);
  EXPECT_DOUBLE_EQ(merged.at("wall_s").get<double>(), 5.0);
  ASSERT_EQ(merged.at("tasks").size(), 3u);
  EXPECT_EQ(merged.at("tasks")[2].at("node"), "n2");  // sorted by task id
  EXPECT_TRUE(merged.at("warnings").empty()) << merged.at("warnings").dump();
}

TEST(SlurmMerge, AGpuMeasuredByTwoTasksOfANodeIsCountedOnceWithAWarning) {
  const auto merged = merge_step(select_step({task("7", "0", "n1", 0, 2, 4.0, json::array({gpu("A", 100)})),
                                              task("7", "0", "n1", 1, 2, 5.0, json::array({gpu("A", 125)}))},
                                             std::nullopt));
  const auto& node = merged.at("nodes")[0];
  EXPECT_DOUBLE_EQ(node.at("energy_j").get<double>(), 125);  // the longer window, not 225
  EXPECT_EQ(node.at("gpus")[0].at("task_id"), 1);
  EXPECT_EQ(node.at("gpus")[0].at("measured_by_tasks"), json::array({0, 1}));
  ASSERT_EQ(merged.at("warnings").size(), 1u);
  EXPECT_NE(merged.at("warnings")[0].get<std::string>().find("--gpus-per-task"), std::string::npos);
}

TEST(SlurmMerge, AMissingTaskMakesTheStepIncompleteAndIsNamed) {
  const auto merged = merge_step(select_step({task("7", "0", "n1", 0, 3, 1, json::array({gpu("A", 1)})),
                                              task("7", "0", "n1", 2, 3, 1, json::array({gpu("B", 1)}))},
                                             std::nullopt));
  EXPECT_FALSE(merged.at("complete").get<bool>());
  EXPECT_EQ(merged.at("missing_tasks"), json::array({1}));
  EXPECT_EQ(merged.at("warnings").size(), 1u);
}

TEST(SlurmMerge, AnUnknownGpuEnergyMakesTheNodeAndTotalUnknownNotSmaller) {
  const auto merged = merge_step(select_step({task("7", "0", "n1", 0, 2, 1, json::array({gpu("A", nullptr)})),
                                              task("7", "0", "n2", 1, 2, 1, json::array({gpu("B", 50)}))},
                                             std::nullopt));
  EXPECT_TRUE(merged.at("nodes")[0].at("energy_j").is_null());
  EXPECT_TRUE(merged.at("energy_j").is_null());
  EXPECT_DOUBLE_EQ(merged.at("nodes")[1].at("energy_j").get<double>(), 50);
}

TEST(SlurmMerge, PhasesAreAddedOverTasksAndSplitByRankCountingOutermostOccurrencesOnly) {
  const json phases0 = {{{"name", "iteration"}, {"count", 2}, {"time_s", 1.0}, {"energy_j", 40.0}}};
  const json phases1 = {{{"name", "iteration"}, {"count", 1}, {"time_s", 0.5}, {"energy_j", 10.0}}};
  const json instances0 = {instance("iteration", 0, 0.0, 0.5, 20.0), instance("iteration", 0, 1.0, 1.5, 20.0),
                           instance("iteration", 0, 1.1, 1.2, 4.0, 1),  // nested: inside the second
                           instance("iteration", nullptr, 2.0, 2.5, json(nullptr))};
  const auto merged = merge_step(
      select_step({task("7", "0", "n1", 0, 2, 3, json::array({gpu("A", 100)}), phases0, instances0),
                   task("7", "0", "n1", 1, 2, 3, json::array({gpu("B", 100)}), phases1)},
                  std::nullopt));
  ASSERT_EQ(merged.at("phases").size(), 1u);
  EXPECT_EQ(merged.at("phases")[0].at("count"), 3);
  EXPECT_DOUBLE_EQ(merged.at("phases")[0].at("time_s").get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(merged.at("phases")[0].at("energy_j").get<double>(), 50.0);
  const auto& by_rank = merged.at("tasks")[0].at("phases_by_rank");
  ASSERT_EQ(by_rank.size(), 2u) << by_rank.dump();
  EXPECT_TRUE(by_rank[0].at("rank").is_null());  // rank-less first
  EXPECT_TRUE(by_rank[0].at("energy_j").is_null());
  EXPECT_EQ(by_rank[1].at("rank"), 0);
  EXPECT_EQ(by_rank[1].at("count"), 2);
  EXPECT_DOUBLE_EQ(by_rank[1].at("time_s").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(by_rank[1].at("energy_j").get<double>(), 40.0);
}

TEST(SlurmMerge, AMeasurementWithoutSlurmObjectIsADataErrorNamingTheFile) {
  std::string message;
  EXPECT_EQ(kind_of([&] { task_result({{"wall_s", 1}}, "plain.json"); }, &message), ErrorKind::kData);
  EXPECT_NE(message.find("plain.json"), std::string::npos) << message;
}

TEST(SlurmMerge, APhaseInstanceWithoutItsTimesIsADataErrorNotACrash) {
  auto good = task("7", "0", "n1", 0, 1, 1, json::array({gpu("A", 1)}), json::array(),
                   json::array({instance("iteration", 0, 0.0, 0.5, 1.0)}));
  auto m = good.measurement;
  m["phase_instances"][0].erase("end_s");
  std::string message;
  EXPECT_EQ(kind_of([&] { task_result(m, "cut.json"); }, &message), ErrorKind::kData);
  EXPECT_NE(message.find("cut.json"), std::string::npos) << message;
}

}  // namespace
}  // namespace wattwise::slurm
