// Issue 14's multi-node sweeps on the localhost cluster (two slurmd, each node with its own fake NVML
// state): `salloc -N2 wattwise sweep --slurm`, each run an srun step whose per-node agents set, measure and
// restore their node's GPUs. The job itself records what its node's driver holds while it runs (the fake's
// persistent state, through fake_nvml_ctl), so the test sees each node's limit during each run; after the
// sweep, and after one agent is SIGKILLed mid-run, every node must be back at its initial limit.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <memory>
#include <thread>

#include "cluster_suite.hpp"
#include "e2e_fixture.hpp"
#include "local_cluster.hpp"
#include "store/results_store.hpp"

namespace wattwise::e2e {
namespace {

namespace fs = std::filesystem;

constexpr double kDrawW = 500;          // every GPU's draw, above every limit swept: a GPU draws its limit
constexpr double kInitialLimitW = 700;  // what every node must be put back to
constexpr double kCounterPostingS = 0.1;

nlohmann::json node_config(int node) {
  nlohmann::json gpus = nlohmann::json::array();
  for (int g = 0; g < 2; ++g)
    gpus.push_back({{"uuid", "GPU-n" + std::to_string(node) + "-" + std::to_string(g)},
                    {"pci_bus_id", g == 0 ? "00000000:19:00.0" : "00000000:3B:00.0"},
                    {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 700}}},
                    {"profile", {{{"duration_s", 1.0}, {"watts", kDrawW}}}}});
  return {{"driver_version", "580.159.04"}, {"gpus", gpus}};
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SlurmSweepTest : public ClusterSuite<SlurmSweepTest> {
 protected:
  static void SetUpTestSuite() { start_cluster("/tmp/wattwise-slurm-sweep-XXXXXX", 2, 2); }

  void SetUp() override {
    ClusterSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // Each node its own fake driver and state ("%n": the fake reads SLURMD_NODENAME), fresh per test.
    for (int node = 1; node <= 2; ++node)
      std::ofstream(path("fake-n" + std::to_string(node) + ".json")) << node_config(node).dump(2);
    env_["WATTWISE_FAKE_NVML_CONFIG"] = path("fake-%n.json").string();
    env_["WATTWISE_STATE_DIR"] = path("state").string();
    fs::create_directories(path("seen"));
  }
  // The job on every node: records the node's driver state as it runs, names its agent (its parent), then
  // works for `seconds`.
  std::vector<std::string> recording_job(double seconds) const {
    const std::string seen = path("seen").string();
    return {"/bin/sh", "-c",
            std::string(FAKE_NVML_CTL) + " show > " + seen +
                "/$SLURM_JOB_ID.$SLURM_STEP_ID.$SLURMD_NODENAME.json" + " && echo $PPID > " + seen +
                "/agent.$SLURM_STEP_ID.$SLURMD_NODENAME.pid && sleep " + std::to_string(seconds)};
  }

  ProcessResult salloc_sweep(const std::vector<std::string>& sweep_args, SpawnOptions options = {}) {
    std::vector<std::string> argv = {LocalCluster::program("salloc"), "-N2", WATTWISE_BIN, "sweep",
                                     "--slurm"};
    argv.insert(argv.end(), sweep_args.begin(), sweep_args.end());
    options.guard = std::chrono::seconds(90);
    return run(argv, options);
  }

  // The node's GPUs' limits as its fake driver holds them now, by UUID.
  std::map<std::string, double> limits_now(int node) {
    Environment env = minimal_environment();
    env["WATTWISE_FAKE_NVML_CONFIG"] = path("fake-n" + std::to_string(node) + ".json").string();
    SpawnOptions options;
    options.capture_dir = dir_;
    const auto r = run_process({FAKE_NVML_CTL, "show"}, env, options);
    std::map<std::string, double> limits;
    const auto state = nlohmann::json::parse(r.out);
    for (const auto& [uuid, s] : state.items()) limits[uuid] = s.at("power_limit_w").get<double>();
    return limits;
  }

  void expect_every_node_restored(const std::string& when) {
    for (int node = 1; node <= 2; ++node) {
      const auto limits = limits_now(node);
      EXPECT_EQ(limits.size(), 2u) << when;
      for (const auto& [uuid, limit_w] : limits) EXPECT_EQ(limit_w, kInitialLimitW) << uuid << " " << when;
    }
  }

  // The pid files of the agents whose job has started (after recording the node's limit), by node file
  // name ("n1.pid").
  std::map<std::string, fs::path> agents_started() const {
    std::map<std::string, fs::path> agents;
    for (const auto& f : fs::directory_iterator(path("seen"))) {
      const std::string name = f.path().filename().string();
      if (name.rfind("agent.", 0) == 0 && name.size() > 5 && f.file_size() > 0)
        agents[name.substr(name.rfind('.', name.size() - 5) + 1)] = f.path();
    }
    return agents;
  }

};

// The step of each run from its nodes' result files: run-000N/job-J.step-S.NODE.task-T.json.
std::map<std::size_t, std::pair<std::string, std::string>> steps_of_runs(const fs::path& nodes_dir) {
  std::map<std::size_t, std::pair<std::string, std::string>> steps;
  for (const auto& run_dir : fs::directory_iterator(nodes_dir)) {
    const std::size_t index = std::stoul(run_dir.path().filename().string().substr(4, 4));
    for (const auto& file : fs::directory_iterator(run_dir.path())) {
      const auto slurm = nlohmann::json::parse(read_text(file.path())).at("slurm");
      steps[index] = {slurm.at("job_id"), slurm.at("step_id")};
    }
  }
  return steps;
}

TEST_F(SlurmSweepTest, TwoNodeSweepHoldsEachLimitOnBothNodesRestoresThemAndStoresPerNodeAndTotalEnergy) {
  std::vector<std::string> args = {"--power-limit", "300,400", "--db", path("s.db").string(), "--"};
  for (const auto& a : recording_job(1.5)) args.push_back(a);
  const auto r = salloc_sweep(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto runs = store::ResultsStore::open_read_only(path("s.db")).runs();
  ASSERT_EQ(runs.size(), 2u);
  const auto steps = steps_of_runs(path("s.db.nodes"));
  for (const auto& run : runs) {
    EXPECT_TRUE(run.error.empty()) << run.error;
    const double limit_w = std::stod(run.settings.at(0).value);
    const auto& [job, step] = steps.at(run.plan_index);
    // While the run's job ran, each node's driver held the run's limit on both GPUs.
    for (int node = 1; node <= 2; ++node) {
      const auto seen = path("seen") / (job + "." + step + ".n" + std::to_string(node) + ".json");
      ASSERT_TRUE(fs::exists(seen)) << seen;
      const auto state = nlohmann::json::parse(read_text(seen));
      ASSERT_EQ(state.size(), 2u) << state.dump();
      for (const auto& [uuid, s] : state.items())
        EXPECT_EQ(s.at("power_limit_w").get<double>(), limit_w) << uuid << " in run " << run.plan_index;
    }
    // Per node: its two GPUs drew the limit (their draw is above it) over the node's job; the run's energy
    // is the nodes' sum. Each end of a window is up to one ~100 ms counter posting off (slurm_cluster_test).
    ASSERT_EQ(run.cluster_nodes.size(), 2u);
    double nodes_sum_j = 0;
    for (const auto& n : run.cluster_nodes) {
      ASSERT_TRUE(n.energy_j) << n.node;
      EXPECT_TRUE(n.complete) << n.node;
      EXPECT_GT(n.wall_s, 1.4) << n.node;
      const double expected_j = 2 * limit_w * n.wall_s;
      EXPECT_NEAR(*n.energy_j, expected_j, 2 * limit_w * 2 * kCounterPostingS) << n.node << " at " << limit_w;
      std::printf("deviation: %+.3f%% node %s at %.0f W\n", 100 * (*n.energy_j / expected_j - 1),
                  n.node.c_str(), limit_w);
      const auto gpus = nlohmann::json::parse(n.gpus_json);
      for (const auto& gpu : gpus)
        EXPECT_EQ(gpu.at("enforced_power_limit_w").get<double>(), limit_w) << gpu.dump();
      nodes_sum_j += *n.energy_j;
    }
    EXPECT_EQ(run.cluster_nodes[0].node, "n1");
    EXPECT_EQ(run.cluster_nodes[1].node, "n2");
    ASSERT_TRUE(run.energy_j);
    EXPECT_NEAR(*run.energy_j, nodes_sum_j, 1e-9 * nodes_sum_j);
  }
  expect_every_node_restored("after the sweep");
}

TEST_F(SlurmSweepTest, OneNodesAgentKilledMidRunLeavesEveryNodeRestoredAndTheRunFailed) {
  std::vector<std::string> args = {"--power-limit", "300", "--db", path("k.db").string(), "--"};
  for (const auto& a : recording_job(8)) args.push_back(a);
  bool killed = false;
  SpawnOptions options;
  // Once both agents have set their GPUs and started the job (each job writes its agent's pid after
  // recording the limit), n2's agent is killed: its watchdog must restore n2, and the step's end n1.
  options.while_running = [&](int) {
    if (killed) return;
    const auto agents = agents_started();
    if (agents.size() < 2) return;
    const int pid = std::stoi(read_text(agents.at("n2.pid")));
    for (int node = 1; node <= 2; ++node)  // the kill comes while both nodes are capped
      EXPECT_EQ(limits_now(node).begin()->second, 300) << "n" << node;
    ::kill(pid, SIGKILL);
    killed = true;
  };
  const auto r = salloc_sweep(args, options);
  ASSERT_TRUE(killed) << r.err << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.err;  // its one run failed
  const auto runs = store::ResultsStore::open_read_only(path("k.db")).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NE(runs[0].error.find("no result from node task(s) 1"), std::string::npos) << runs[0].error;
  // n2's watchdog restores on its own time (it saw its agent die), within a second or so.
  for (int waited_ms = 0; waited_ms < 10000 && limits_now(2).begin()->second != kInitialLimitW;
       waited_ms += 100)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  expect_every_node_restored("after n2's agent was killed");
  // Every journal was settled: nothing is left for `wattwise restore`.
  for (const auto& f : fs::directory_iterator(path("state")))
    EXPECT_EQ(f.path().filename().string().find("journal"), std::string::npos) << f.path();
}

TEST_F(SlurmSweepTest, CtrlCOfTheSweepMidRunRestoresEveryNodeAndLeavesTheRunForResume) {
  std::vector<std::string> args = {"--power-limit", "300", "--db", path("c.db").string(), "--"};
  for (const auto& a : recording_job(8)) args.push_back(a);
  bool interrupted = false;
  SpawnOptions options;
  // The sweep is salloc's child (salloc runs the command it is given): its pid from the kernel's list of
  // salloc's children, so that only it gets the SIGINT, as from a Ctrl-C in its terminal.
  options.while_running = [&](int salloc_pid) {
    if (interrupted || agents_started().size() < 2) return;
    std::ifstream children("/proc/" + std::to_string(salloc_pid) + "/task/" + std::to_string(salloc_pid) +
                           "/children");
    int sweep_pid = 0;
    ASSERT_TRUE(children >> sweep_pid) << "salloc has no child";
    ::kill(sweep_pid, SIGINT);
    interrupted = true;
  };
  const auto r = salloc_sweep(args, options);
  ASSERT_TRUE(interrupted) << r.err << r.out;
  EXPECT_NE(r.err.find("sweep stopped by signal 2"), std::string::npos) << r.err;
  // The cut run is not stored: `--resume` runs it again.
  EXPECT_TRUE(store::ResultsStore::open_read_only(path("c.db")).runs().empty());
  expect_every_node_restored("after the sweep's Ctrl-C");
  for (const auto& f : fs::directory_iterator(path("state")))
    EXPECT_EQ(f.path().filename().string().find("journal"), std::string::npos) << f.path();

  // `--resume --db` alone continues it as a multi-node sweep (--slurm is stored with it); the cut run's
  // node files stay, the new attempt's go beside them.
  const auto resumed = salloc_sweep({"--resume", "--db", path("c.db").string()});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto runs = store::ResultsStore::open_read_only(path("c.db")).runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_TRUE(runs[0].error.empty()) << runs[0].error;
  EXPECT_EQ(runs[0].cluster_nodes.size(), 2u);
  EXPECT_TRUE(fs::exists(path("c.db.nodes") / "run-0000.attempt-2"));
  expect_every_node_restored("after the resumed sweep");
}

}  // namespace
}  // namespace wattwise::e2e
