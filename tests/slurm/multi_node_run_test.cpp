// A multi-node sweep's pieces without a cluster: the srun line of a run (node count, the run's setting for
// every node's agent, the job's knobs) and the run's database row from its nodes' results (per-node and
// total energy, each GPU's enforced limit, and what makes the run a failed one).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>

#include "../support/temp_dir.hpp"
#include "experiment/multi_node_run.hpp"
#include "slurm/merge.hpp"
#include "store/results_store.hpp"

namespace wattwise::experiment {
namespace {

using nlohmann::json;

plan::PlannedRun run_with(double limit_w, const std::string& nodes) {
  plan::PlannedRun run;
  run.index = 3;
  run.settings = {{"power_limit_w", "300"}, {"nodes", nodes}};
  run.hardware.power_limit_w = limit_w;
  run.params = {{"power_limit_w", "300"}, {"nodes", nodes}, {"batch", "64"}};
  return run;
}

bool has_sequence(const std::vector<std::string>& argv, const std::vector<std::string>& part) {
  return std::search(argv.begin(), argv.end(), part.begin(), part.end()) != argv.end();
}

// One node's agent result: two GPUs at `power_w` each for `wall_s`, held at `limit_w`.
slurm::TaskResult node_result(const std::string& node, int task_id, double power_w, double wall_s,
                              double limit_w, bool restored = true) {
  slurm::SlurmTask t;
  t.job_id = "77";
  t.step_id = "4";
  t.node = node;
  t.task_id = task_id;
  t.node_id = task_id;
  t.tasks = 2;
  t.nodes = 2;
  json gpus = json::array(), enforced = json::array();
  for (int g = 0; g < 2; ++g) {
    const std::string uuid = "GPU-" + node + "-" + std::to_string(g);
    gpus.push_back({{"index", g},
                    {"uuid", uuid},
                    {"name", "H100"},
                    {"energy_j", power_w * wall_s},
                    {"method", "counter"},
                    {"used_by_job", true}});
    enforced.push_back({{"uuid", uuid}, {"index", g}, {"enforced_power_limit_w", limit_w}});
  }
  json m = {
      {"wall_s", wall_s},
      {"exit_code", 0},
      {"complete", true},
      {"energy_j", 2 * power_w * wall_s},
      {"gpus", gpus},
      {"phases", json::array({{{"name", "epoch"}, {"count", 1}, {"time_s", wall_s}, {"energy_j", 100}}})},
      {"phase_instances", json::array()},
      {"slurm", slurm::to_json(t)},
      {"settings", {{"power_limit_w", limit_w}, {"gpus", enforced}, {"restored", restored}}}};
  return slurm::task_result(m, "job-77.step-4." + node + ".task-" + std::to_string(task_id) + ".json");
}

TEST(SlurmMultiNodeRun, SrunLineStartsOneAgentPerNodeWithTheRunsSettingAndNodeCount) {
  MultiNodeOptions options;
  options.wattwise = "/opt/ww/bin/wattwise";
  options.srun_args = {"--gpus-per-node=4"};
  options.agent_args = {"--interval", "50"};
  options.command = {"python", "train.py", "--batch", "{batch}"};
  const auto argv = srun_argv(options, run_with(300, "2"), "/shared/db.nodes/run-0003");
  EXPECT_EQ(argv.front(), "srun");
  EXPECT_TRUE(has_sequence(argv, {"--nodes=2", "--ntasks-per-node=1", "--kill-on-bad-exit=1"}));
  EXPECT_TRUE(has_sequence(argv, {"--gpus-per-node=4", "/opt/ww/bin/wattwise", "measure"}));
  EXPECT_TRUE(has_sequence(argv, {"--out-dir", "/shared/db.nodes/run-0003"}));
  EXPECT_TRUE(has_sequence(argv, {"--power-limit", "300"}));
  EXPECT_TRUE(has_sequence(argv, {"--interval", "50", "--", "python", "train.py", "--batch", "64"}));
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "--sm-clock"), 0);
}

TEST(SlurmMultiNodeRun, WithoutANodesKnobSrunTakesEveryNodeOfTheAllocation) {
  plan::PlannedRun run;
  run.hardware.power_limit_w = 250.5;
  MultiNodeOptions options;
  options.wattwise = "/w";
  options.command = {"job"};
  const auto argv = srun_argv(options, run, "/d");
  EXPECT_TRUE(std::none_of(argv.begin(), argv.end(),
                           [](const std::string& a) { return a.rfind("--nodes", 0) == 0; }));
  EXPECT_TRUE(has_sequence(argv, {"--power-limit", "250.5"}));
}

TEST(SlurmMultiNodeRun, RecordHasPerNodeEnergyTheirSumAndEachGpusEnforcedLimit) {
  const auto record = multi_node_record(
      run_with(300, "2"), {node_result("n1", 0, 300, 2.0, 300), node_result("n2", 1, 250, 2.5, 300)}, 0, "t0",
      "t1");
  EXPECT_TRUE(record.error.empty()) << record.error;
  ASSERT_EQ(record.cluster_nodes.size(), 2u);
  EXPECT_EQ(record.cluster_nodes[0].node, "n1");
  EXPECT_DOUBLE_EQ(*record.cluster_nodes[0].energy_j, 2 * 300 * 2.0);
  EXPECT_DOUBLE_EQ(*record.cluster_nodes[1].energy_j, 2 * 250 * 2.5);
  EXPECT_DOUBLE_EQ(*record.energy_j, 1200 + 1250);
  EXPECT_DOUBLE_EQ(*record.time_s, 2.5);  // the longest node
  const auto gpus = json::parse(record.cluster_nodes[1].gpus_json);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].at("uuid"), "GPU-n2-0");
  EXPECT_EQ(gpus[0].at("enforced_power_limit_w"), 300);
  EXPECT_TRUE(record.gpus.empty());  // GPU indices repeat across nodes: the GPUs are kept per node
  ASSERT_EQ(record.phases.size(), 1u);
  EXPECT_EQ(record.phases[0].count, 2u);  // the epoch of each node
}

TEST(SlurmMultiNodeRun, ANodeWithoutResultOrNotRestoredMakesTheRunFailed) {
  const auto missing =
      multi_node_record(run_with(300, "2"), {node_result("n1", 0, 300, 2.0, 300)}, 137, "t0", "t1");
  EXPECT_NE(missing.error.find("srun killed by signal 9"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("no result from node task(s) 1"), std::string::npos) << missing.error;
  EXPECT_FALSE(missing.energy_j.has_value() && missing.error.empty());
  const auto unrestored = multi_node_record(
      run_with(300, "2"), {node_result("n1", 0, 300, 2.0, 300), node_result("n2", 1, 300, 2.0, 300, false)},
      0, "t0", "t1");
  EXPECT_NE(unrestored.error.find("node n2: GPU settings not restored"), std::string::npos)
      << unrestored.error;
  const auto none = multi_node_record(run_with(300, "2"), {}, 1, "t0", "t1");
  EXPECT_NE(none.error.find("no node wrote a result"), std::string::npos);
  EXPECT_FALSE(none.energy_j.has_value());
}

TEST(SlurmMultiNodeRun, NodesOfARunAreStoredAndReadBackAndReplacedWithTheRun) {
  const wattwise::testing::TempDir dir("wattwise-multinode");
  const std::filesystem::path db = dir / "s.db";
  {
    auto store = store::ResultsStore::create(db, {}, {{"knobs", json::array()}}, {});
    auto failed = multi_node_record(run_with(300, "2"), {node_result("n1", 0, 300, 2.0, 300)}, 1, "t0", "t1");
    store.add_run(failed);
    store.add_run(multi_node_record(
        run_with(300, "2"), {node_result("n1", 0, 300, 2.0, 300), node_result("n2", 1, 250, 2.0, 300)}, 0,
        "t2", "t3"));
  }
  const auto runs = store::ResultsStore::open_read_only(db).runs();
  ASSERT_EQ(runs.size(), 1u);  // the failed attempt went to earlier_attempts, its node with it
  ASSERT_EQ(runs[0].cluster_nodes.size(), 2u);
  EXPECT_EQ(runs[0].cluster_nodes[1].node, "n2");
  EXPECT_DOUBLE_EQ(*runs[0].cluster_nodes[1].energy_j, 1000);
  EXPECT_TRUE(runs[0].cluster_nodes[1].complete);
  EXPECT_EQ(json::parse(runs[0].cluster_nodes[0].gpus_json).size(), 2u);
}

}  // namespace
}  // namespace wattwise::experiment
