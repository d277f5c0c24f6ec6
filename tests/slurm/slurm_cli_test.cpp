// `measure --out-dir` and `merge` with the real binary on the fake NVML, SLURM's variables set by the test
// (no cluster needed): the task's file, its name and `slurm` object, and every refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class SlurmCliTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
  }
  // The variables srun gives task `task_id` of job 77, step 3, on node nodeA, with GPU `task_id`.
  void as_slurm_task(int task_id, int tasks) {
    env_["SLURM_JOB_ID"] = "77";
    env_["SLURM_STEP_ID"] = "3";
    env_["SLURMD_NODENAME"] = "nodeA";
    env_["SLURM_PROCID"] = std::to_string(task_id);
    env_["SLURM_LOCALID"] = std::to_string(task_id);
    env_["SLURM_NTASKS"] = std::to_string(tasks);
    env_["CUDA_VISIBLE_DEVICES"] = std::to_string(task_id);
  }
  ProcessResult measure_into(const std::string& out, const std::vector<std::string>& job) {
    std::vector<std::string> args = {"measure", "--out-dir", path(out).string(), "--"};
    args.insert(args.end(), job.begin(), job.end());
    return wattwise(args);
  }
  std::vector<std::string> touch(const std::string& name) { return {"/usr/bin/touch", path(name).string()}; }
};

TEST_F(SlurmCliTest, OutDirOutsideSlurmIsAUsageErrorAndTheJobDoesNotRun) {
  const auto r = measure_into("out", touch("ran"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("SLURM_JOB_ID is not set"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

TEST_F(SlurmCliTest, OutDirWritesTheTasksResultNamedByJobStepNodeAndTaskWithItsSlurmObject) {
  as_slurm_task(1, 2);
  const auto r = measure_into("out", {"/bin/sleep", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("out/job-77.step-3.nodeA.task-1.json");
  // The summary says where the result went (the summary's stream, stdout or stderr, is measure's business).
  EXPECT_NE(
      (r.out + r.err).find("SLURM task result: " + path("out/job-77.step-3.nodeA.task-1.json").string()),
      std::string::npos)
      << r.out << r.err;
  EXPECT_EQ(m.at("slurm").at("job_id"), "77");
  EXPECT_EQ(m.at("slurm").at("step_id"), "3");
  EXPECT_EQ(m.at("slurm").at("task_id"), 1);
  EXPECT_EQ(m.at("slurm").at("tasks"), 2);
  EXPECT_EQ(m.at("slurm").at("cuda_visible_devices"), "1");
  // The task measured the GPU its CUDA_VISIBLE_DEVICES names, not the node's others.
  ASSERT_EQ(m.at("gpus").size(), 1u);
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");
}

TEST_F(SlurmCliTest, AResultAlreadyThereIsNotOverwrittenAndTheJobDoesNotRun) {
  as_slurm_task(0, 1);
  std::filesystem::create_directories(path("out"));
  std::ofstream(path("out/job-77.step-3.nodeA.task-0.json")) << "keep";
  const auto r = measure_into("out", touch("ran"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("nothing was overwritten"), std::string::npos);
  EXPECT_EQ(read_lines("out/job-77.step-3.nodeA.task-0.json"), std::vector<std::string>{"keep"});
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

TEST_F(SlurmCliTest, AnOutDirThatCannotBeCreatedIsAnEnvironmentErrorAndTheJobDoesNotRun) {
  as_slurm_task(0, 1);
  std::ofstream(path("a-file")) << "in the way";  // root may write anywhere: a file in the path stops anyone
  const auto r = measure_into("a-file/out", touch("ran"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(single_error_line(r).find("cannot create --out-dir"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
}

TEST_F(SlurmCliTest, MergeOfAPathThatDoesNotExistIsAUsageError) {
  const auto r = wattwise({"merge", path("nowhere").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("does not exist"), std::string::npos);
}

TEST_F(SlurmCliTest, MergeOfACorruptTaskFileIsADataErrorNamingIt) {
  std::filesystem::create_directories(path("out"));
  std::ofstream(path("out/job-1.step-0.n.task-0.json")) << "{\"slurm\": ";
  const auto r = wattwise({"merge", path("out").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(single_error_line(r).find("job-1.step-0.n.task-0.json"), std::string::npos);
}

TEST_F(SlurmCliTest, AMissingTaskStillWritesTheMergeAndExits4) {
  as_slurm_task(0, 2);
  env_["CUDA_VISIBLE_DEVICES"] = "1";  // the constant GPU: its energy is power x time
  ASSERT_EQ(measure_into("out", {"/bin/sleep", "0.2"}).exit_code, 0);
  const auto r = wattwise({"merge", path("out").string(), "--json", path("merged.json").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("1 of the step's 2 tasks have no result"), std::string::npos) << r.err;
  const auto m = read_json("merged.json");
  EXPECT_FALSE(m.at("complete").get<bool>());
  EXPECT_EQ(m.at("missing_tasks"), nlohmann::json::array({1}));
  EXPECT_NEAR(m.at("energy_j").get<double>(), kConstantPowerW * m.at("wall_s").get<double>(),
              0.01 * kConstantPowerW * m.at("wall_s").get<double>());
}

TEST_F(SlurmCliTest, AMergedFileWrittenIntoTheDirectoryIsSkippedNextTime) {
  as_slurm_task(0, 1);
  ASSERT_EQ(measure_into("out", {"/bin/sleep", "0.1"}).exit_code, 0);
  ASSERT_EQ(wattwise({"merge", path("out").string(), "--json", path("out/merged.json").string()}).exit_code,
            0);
  const auto r = wattwise({"merge", path("out").string(), "--json", "-"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("skipped '" + path("out/merged.json").string() + "'"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).at("tasks").size(), 1u);  // stdout is the JSON alone
}

TEST_F(SlurmCliTest, CounterSinceAnEarlierReadingIsTheGpusPowerTimesTheTimeBetween) {
  ASSERT_EQ(wattwise({"counter", "--gpus", "1", "--json", path("start.json").string()}).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto r = wattwise({"counter", "--gpus", "1", "--since", path("start.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = nlohmann::json::parse(r.out);
  const double elapsed_s = e.at("elapsed_s");
  ASSERT_GT(elapsed_s, 0.8);
  ASSERT_EQ(e.at("gpus").size(), 1u);
  EXPECT_EQ(e["gpus"][0].at("uuid"), "GPU-e2e-constant");
  // Each reading is up to one 100 ms counter posting stale: their difference is off by one posting, plus the
  // scheduling delay between reading the clock and the counter (as in slurm_cluster_test.cpp): 1.5 postings.
  EXPECT_NEAR(e.at("energy_j").get<double>(), kConstantPowerW * elapsed_s, 1.5 * kConstantPowerW * 0.1);
}

TEST_F(SlurmCliTest, CounterSinceAFileThatIsNotThereIsAUsageErrorBeforeAnyGpuIsRead) {
  const auto r = wattwise({"counter", "--since", path("nowhere.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("nowhere.json"), std::string::npos);
}

}  // namespace
}  // namespace wattwise::e2e
