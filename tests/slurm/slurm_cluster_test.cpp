// The Proof of issue 14's SLURM item: a real munged, slurmctld and two slurmd (multiple-slurmd, on localhost)
// started by the test, jobs submitted with srun running `wattwise measure --out-dir` on the fake NVML, and
// `wattwise merge` checked against the fake GPUs' known power: every task's phases, per-node and total
// energy. Skipped, saying why, where the SLURM packages are missing or the test is not root.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include "cluster_suite.hpp"
#include "e2e_fixture.hpp"
#include "local_cluster.hpp"

namespace wattwise::e2e {
namespace {

// Constant draws, different on every GPU of every node, so energy charged to the wrong GPU, rank or node
// misses by a third or more, never by a percent.
constexpr double kPowerW[2][2] = {{400, 150}, {250, 100}};  // [node n1, n2][GPU 0, 1]
constexpr int kIterations = 3;
constexpr double kCounterPostingS = 0.1;  // the fake's energy counter is posted every 100 ms, like an H100's
                                          // // slurm_task_job.py and multirank_job.py

// Energies against power x time. A whole run's energy is the counter's increase between the job's start and
// end, read off the counter's timeline; on an idle machine that matches power x wall time to < 0.001%, but
// a starved sampler (here two wattwise, python jobs and four SLURM daemons on 2 shared cores) can place each
// end of the window up to one ~100 ms counter posting off: -2.9% on a 3.2 s task in one of 5 runs at load 8
// (docs/evidence/slurm.md). So a run's bound is two postings' energy; a task or node charged with the wrong
// GPU or node is off by >= 36% (550 W vs 350 W a node, 400 W vs 150 W a task), several times that bound.
constexpr double kRunWindowErrorS = 2 * kCounterPostingS;
// A phase is cut from the 20 ms samples scaled to the counter's increments, and that scaling needs the
// sampler to read the counter on time: in one run on the shared 2-core VM (jobs took 3x their length) a
// task's phases came out 8% and 11% high (docs/evidence/slurm.md). What this test proves is attribution, so
// the bound is set below the nearest wrong answer: a phase charged to the other GPU of its node is off by
// >= 60% (400 W vs 150 W, 250 W vs 100 W). Phase accuracy itself is tests/e2e's (run serially).
constexpr double kPhaseTolerance = 0.25;

nlohmann::json node_config(int node) {
  nlohmann::json gpus = nlohmann::json::array();
  for (int g = 0; g < 2; ++g)
    gpus.push_back({{"name", "NVIDIA H100 80GB HBM3"},
                    {"uuid", "GPU-n" + std::to_string(node + 1) + "-" + std::to_string(g)},
                    {"pci_bus_id", g == 0 ? "00000000:19:00.0" : "00000000:3B:00.0"},
                    {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 700}}},
                    {"profile", {{{"duration_s", 1.0}, {"watts", kPowerW[node][g]}}}}});
  return {{"driver_version", "580.159.04"}, {"gpus", gpus}};
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The phase of this name and rank in a merged task's phases_by_rank.
nlohmann::json rank_phase(const nlohmann::json& task, int rank, const std::string& name) {
  for (const auto& p : task.at("phases_by_rank"))
    if (p.at("rank") == rank && p.at("name") == name) return p;
  ADD_FAILURE() << "no phase " << name << " of rank " << rank << " in " << task.dump();
  return {{"count", 0}, {"time_s", 0}, {"energy_j", 0}};
}

// `tolerance_j` absent: kPhaseTolerance of the expected energy.
void expect_power(const nlohmann::json& energy_j, double power_w, double time_s, const std::string& what,
                  std::optional<double> tolerance_j = std::nullopt) {
  ASSERT_TRUE(energy_j.is_number()) << what;
  ASSERT_GT(time_s, 0.1) << what;
  const double expected_j = power_w * time_s;
  EXPECT_NEAR(energy_j.get<double>(), expected_j, tolerance_j.value_or(kPhaseTolerance * expected_j)) << what;
  // The deviation, for docs/evidence/slurm.md: how much of the tolerance a run used.
  std::printf("deviation: %+.3f%% %s\n", 100 * (energy_j.get<double>() / expected_j - 1), what.c_str());
}

class SlurmClusterTest : public ClusterSuite<SlurmClusterTest> {
 protected:
  static void SetUpTestSuite() {
    start_cluster("/tmp/wattwise-slurm-XXXXXX", 2, 2, [] {
      for (int node = 0; node < 2; ++node)
        std::ofstream(cluster_dir() / ("fake-n" + std::to_string(node + 1) + ".json")) << node_config(node).dump(2);
      return prolog_epilog_conf();
    });
  }

  // srun SRUN_FLAGS wattwise measure --out-dir OUT -- JOB..., each task reading its node's fake GPUs.
  ProcessResult srun_measure(const std::vector<std::string>& srun_flags, const std::string& out,
                             const std::vector<std::string>& job) {
    std::vector<std::string> argv = {LocalCluster::program("srun")};
    argv.insert(argv.end(), srun_flags.begin(), srun_flags.end());
    const std::string script = "WATTWISE_FAKE_NVML_CONFIG=" + cluster_dir().string() +
                               "/fake-$SLURMD_NODENAME.json exec " WATTWISE_BIN " measure --out-dir " +
                               path(out).string() + " -- \"$@\"";
    for (const std::string& a : {std::string("/bin/sh"), std::string("-c"), script, std::string("sh")})
      argv.push_back(a);
    argv.insert(argv.end(), job.begin(), job.end());
    SpawnOptions options;
    options.guard = std::chrono::seconds(40);
    return run(argv, options);
  }

  nlohmann::json merge(const std::string& out) {
    const auto r = wattwise({"merge", path(out).string(), "--json", path(out + ".merged.json").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
    EXPECT_NE(r.out.find("SLURM job"), std::string::npos) << r.out;
    return read_json(out + ".merged.json");
  }

  // tools/slurm's prolog and epilog on every node, through the wrapper an operator would write: it names the
  // wattwise binary, the readings' directory and (here) the node's fake driver.
  static std::string prolog_epilog_conf() {
    std::string conf;
    for (const std::string script : {"prolog", "epilog"}) {
      const auto wrapper = cluster_dir() / (script + ".sh");
      std::ofstream(wrapper) << "#!/bin/sh\n"
                             << "export WATTWISE_BIN=" WATTWISE_BIN " WATTWISE_NVML_LIB=" FAKE_NVML_PATH "\n"
                             << "export WATTWISE_SLURM_DIR=" << (cluster_dir() / "energy").string() << "\n"
                             << "export WATTWISE_FAKE_NVML_CONFIG=" << cluster_dir().string()
                             << "/fake-$SLURMD_NODENAME.json\n"
                             << "exec " SLURM_TOOLS_DIR "/" << script << ".sh\n";
      std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
      conf += (script == "prolog" ? "Prolog=" : "Epilog=") + wrapper.string() + "\n";
    }
    return conf;
  }

};

TEST_F(SlurmClusterTest, TwoTasksOnANodeEachMeasureTheGpuSlurmGaveThemAndTheMergeAddsThem) {
  const auto r = srun_measure({"-N1", "-n2", "-w", "n1", "--gpus-per-task=1"}, "out",
                              {PYTHON3, std::string(SLURM_TESTS_DIR) + "/slurm_task_job.py"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto m = merge("out");
  EXPECT_TRUE(m.at("complete").get<bool>()) << m.dump(1);
  EXPECT_EQ(m.at("step_id"), "0");
  EXPECT_EQ(m.at("tasks_expected"), 2);
  ASSERT_EQ(m.at("tasks").size(), 2u);
  ASSERT_EQ(m.at("nodes").size(), 1u);
  for (int id = 0; id < 2; ++id) {
    const auto& task = m.at("tasks")[id];
    const std::string what = "task " + std::to_string(id);
    EXPECT_EQ(task.at("task_id"), id);
    EXPECT_EQ(task.at("local_id"), id);
    EXPECT_EQ(task.at("node"), "n1");
    // srun --gpus-per-task=1 gave each task one GRES GPU in CUDA_VISIBLE_DEVICES: it measured that one only.
    EXPECT_EQ(task.at("cuda_visible_devices"), std::to_string(id)) << what;
    EXPECT_EQ(task.at("gpus"), nlohmann::json::array({"GPU-n1-" + std::to_string(id)})) << what;
    expect_power(task.at("energy_j"), kPowerW[0][id], task.at("wall_s"), what + " total",
                 kPowerW[0][id] * kRunWindowErrorS);
    const auto epoch = rank_phase(task, id, "epoch"), iteration = rank_phase(task, id, "iteration");
    EXPECT_EQ(epoch.at("count"), 1) << what;
    EXPECT_EQ(iteration.at("count"), kIterations) << what;
    expect_power(epoch.at("energy_j"), kPowerW[0][id], epoch.at("time_s"), what + " epoch");
    expect_power(iteration.at("energy_j"), kPowerW[0][id], iteration.at("time_s"), what + " iterations");
  }
  // The tasks' iterations differ in length (0.3 s vs 0.2 s): each task's phases are its own.
  EXPECT_GT(rank_phase(m.at("tasks")[0], 0, "iteration").at("time_s").get<double>(),
            rank_phase(m.at("tasks")[1], 1, "iteration").at("time_s").get<double>() + 0.15);
  const double task_sum_j =
      m["tasks"][0].at("energy_j").get<double>() + m["tasks"][1].at("energy_j").get<double>();
  EXPECT_NEAR(m["nodes"][0].at("energy_j").get<double>(), task_sum_j, 1e-9 * task_sum_j);
  EXPECT_NEAR(m.at("energy_j").get<double>(), task_sum_j, 1e-9 * task_sum_j);
  EXPECT_TRUE(m.at("warnings").empty()) << m.at("warnings").dump();
}

TEST_F(SlurmClusterTest, OneWattwisePerNodeOnTwoNodesMeasuresEachNodesRanksAndTheMergeAddsTheNodes) {
  // Each node's wattwise runs a launcher that starts two ranks (LOCAL_RANK 0 and 1, as torchrun does).
  const auto r = srun_measure({"-N2", "--ntasks-per-node=1", "--gres=gpu:2"}, "out",
                              {PYTHON3, std::string(E2E_DIR) + "/multirank_job.py", path("anchor").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto m = merge("out");
  EXPECT_TRUE(m.at("complete").get<bool>()) << m.dump(1);
  ASSERT_EQ(m.at("nodes").size(), 2u);
  ASSERT_EQ(m.at("tasks").size(), 2u);
  double nodes_sum_j = 0;
  for (int node = 0; node < 2; ++node) {
    const auto& n = m.at("nodes")[node];
    const std::string name = "n" + std::to_string(node + 1);
    EXPECT_EQ(n.at("node"), name);
    ASSERT_EQ(n.at("gpus").size(), 2u) << n.dump();
    expect_power(n.at("energy_j"), kPowerW[node][0] + kPowerW[node][1], n.at("wall_s"), name + " total",
                 (kPowerW[node][0] + kPowerW[node][1]) * kRunWindowErrorS);
    nodes_sum_j += n.at("energy_j").get<double>();
    const auto& task = m.at("tasks")[node];
    EXPECT_EQ(task.at("node"), name);
    EXPECT_EQ(task.at("cuda_visible_devices"), "0,1");
    for (int rank = 0; rank < 2; ++rank) {
      const auto iteration = rank_phase(task, rank, "iteration");
      EXPECT_EQ(iteration.at("count"), kIterations) << name << " rank " << rank;
      expect_power(iteration.at("energy_j"), kPowerW[node][rank], iteration.at("time_s"),
                   name + " rank " + std::to_string(rank) + " iterations");
    }
  }
  EXPECT_NEAR(m.at("energy_j").get<double>(), nodes_sum_j, 1e-9 * nodes_sum_j);
}

TEST_F(SlurmClusterTest, PrologAndEpilogRecordEveryJobsGpuEnergyOnEachNode) {
  // A job without wattwise: the prolog's and the epilog's counter readings alone.
  const auto r = run({LocalCluster::program("srun"), "-N2", "--ntasks-per-node=1", "--gres=gpu:2", "/bin/sh",
                      "-c", "echo job=$SLURM_JOB_ID; sleep 1.5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.out.rfind("job=", 0), 0u) << r.out;
  const std::string job = r.out.substr(4, r.out.find('\n') - 4);
  for (int node = 0; node < 2; ++node) {
    const std::string name = "n" + std::to_string(node + 1);
    const auto file = cluster_dir() / "energy" / (job + "." + name + ".json");
    const auto prolog_file = cluster_dir() / "energy" / (job + "." + name + ".prolog.json");
    // The epilog runs after srun returns; removing the prolog's reading is its last act.
    for (int waited_ms = 0;
         (!std::filesystem::exists(file) || std::filesystem::exists(prolog_file)) && waited_ms < 15000;
         waited_ms += 100)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(std::filesystem::exists(file)) << file << " not written; errors.log:\n"
                                               << read_text(cluster_dir() / "energy" / "errors.log");
    const auto e = nlohmann::json::parse(read_text(file));
    EXPECT_FALSE(std::filesystem::exists(prolog_file));
    const double elapsed_s = e.at("elapsed_s");
    EXPECT_GT(elapsed_s, 1.5);
    ASSERT_EQ(e.at("gpus").size(), 2u) << e.dump();
    double sum_j = 0;
    for (int g = 0; g < 2; ++g) {
      const auto& gpu = e.at("gpus")[g];
      EXPECT_EQ(gpu.at("uuid"), "GPU-" + name + "-" + std::to_string(g));
      // Each of the two readings is up to one ~100 ms posting stale (the counter is posted, not live), so
      // their difference is off by up to one posting's energy, plus the scheduling delay between reading the
      // clock and the counter on a loaded machine (88 runs: up to 0.89 posting, docs/evidence/slurm.md):
      // 1.5 postings. A wrong GPU or node is off by >= 37%, over 3 times that.
      const double power_w = kPowerW[node][g];
      EXPECT_NEAR(gpu.at("energy_j").get<double>(), power_w * elapsed_s, 1.5 * power_w * kCounterPostingS)
          << name << " GPU " << g;
      std::printf("deviation: %+.1f J of +-%.0f J %s GPU %d prolog-epilog\n",
                  gpu.at("energy_j").get<double>() - power_w * elapsed_s, power_w * kCounterPostingS,
                  name.c_str(), g);
      sum_j += gpu.at("energy_j").get<double>();
    }
    EXPECT_DOUBLE_EQ(e.at("energy_j").get<double>(), sum_j);
  }
}

TEST_F(SlurmClusterTest, TheMergeRefusesTheResultsOfTwoJobsInOneLineNamingBoth) {
  for (int job = 0; job < 2; ++job) {
    const auto r = srun_measure({"-N1", "-n1"}, "mixed", {"/bin/sleep", "0.2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::set<std::string> jobs;
  for (const auto& entry : std::filesystem::directory_iterator(path("mixed"))) {
    const auto name = entry.path().filename().string();  // job-ID.step-0.n1.task-0.json
    jobs.insert(name.substr(4, name.find('.') - 4));
  }
  ASSERT_EQ(jobs.size(), 2u);
  const auto r = wattwise({"merge", path("mixed").string(), "--json", path("merged.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  const std::string line = single_error_line(r);
  for (const auto& job : jobs) EXPECT_NE(line.find(job + " ("), std::string::npos) << line;
  EXPECT_FALSE(std::filesystem::exists(path("merged.json")));
}

}  // namespace
}  // namespace wattwise::e2e
