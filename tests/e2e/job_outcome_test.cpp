// How the job ends, and what wattwise makes of it: malformed markers, signals, exit codes, time-outs,
// Ctrl-C, and markers from a job that runs without wattwise.
#include <gtest/gtest.h>

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <thread>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class JobOutcomeTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
  }
  ProcessResult measure_job(const std::vector<std::string>& job_args, std::vector<std::string> flags = {},
                            SpawnOptions options = {}) {
    std::vector<std::string> args = {"measure", "--json", path("m.json").string(), "--trace",
                                     path("t.csv").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.push_back("--");
    args.push_back(E2E_JOB);
    args.insert(args.end(), job_args.begin(), job_args.end());
    return wattwise(args, std::move(options));
  }
  // The energy in the JSON of a run that lasted at least wall_s: both GPUs measured, none zero.
  void expect_energy_measured(const nlohmann::json& m) {
    const double wall_s = m.at("wall_s");
    ASSERT_EQ(m.at("gpus").size(), 2u);
    const double constant_j = m["gpus"][1].at("energy_j").get<double>();
    EXPECT_NEAR(constant_j, kConstantPowerW * wall_s, 0.01 * kConstantPowerW * wall_s) << m.dump();
    EXPECT_GT(m["gpus"][0].at("energy_j").get<double>(), 100 * wall_s * 0.99) << m.dump();
    EXPECT_GT(read_lines("t.csv").size(), 20u);
    EXPECT_TRUE(std::filesystem::exists(path("t.phases.csv")));
  }
};

TEST_F(JobOutcomeTest, MalformedMarkersAreCountedNotFatal) {
  const auto r = measure_job({"garbage"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("markers").at("malformed"), 2);
  EXPECT_EQ(m.at("markers").at("received"), 1);  // the valid point after the garbage still arrived
  EXPECT_EQ(m.at("exit_code"), 0);
}

TEST_F(JobOutcomeTest, JobKilledBySigkillGives137AndStillWritesJsonAndTrace) {
  const auto r = measure_job({"signal", std::to_string(SIGKILL), "600"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << r.err;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 137);
  EXPECT_EQ(m.at("signal"), SIGKILL);
  EXPECT_FALSE(m.at("timed_out").get<bool>());
  EXPECT_GE(m.at("wall_s").get<double>(), 0.55);
  expect_energy_measured(m);
}

TEST_F(JobOutcomeTest, JobKilledBySigtermGives143AndStillWritesJsonAndTrace) {
  const auto r = measure_job({"signal", std::to_string(SIGTERM), "600"});
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 143);
  EXPECT_EQ(m.at("signal"), SIGTERM);
  expect_energy_measured(m);
}

TEST_F(JobOutcomeTest, JobExitCodeIsPassedThroughAndReported) {
  const auto r = measure_job({"exit", "3"});
  EXPECT_EQ(r.exit_code, 3);
  // The job's failure is the job's: wattwise reports it, it prints no error of its own.
  EXPECT_EQ(r.err.find("wattwise:"), std::string::npos) << r.err;
  const auto status_at = r.out.find("exit status");
  ASSERT_NE(status_at, std::string::npos) << r.out;
  const auto status_line = r.out.substr(status_at, r.out.find('\n', status_at) - status_at);
  EXPECT_EQ(status_line.back(), '3') << status_line;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 3);
  EXPECT_TRUE(m.at("signal").is_null());
  EXPECT_TRUE(m.at("gpus")[1].at("energy_j").is_number());
}

TEST_F(JobOutcomeTest, TimeoutEndsTheJobAfterOneSecond) {
  const auto r = measure_job({"sleep", "30000"}, {"--timeout", "1"});
  ASSERT_FALSE(r.killed_by_guard);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.wall_s, 4.0);
  const auto m = read_json("m.json");
  EXPECT_TRUE(m.at("timed_out").get<bool>());
  EXPECT_NEAR(m.at("wall_s").get<double>(), 1.0, 0.5);
  EXPECT_EQ(m.at("exit_code"), r.exit_code.value_or(-1));
  expect_energy_measured(m);
}

TEST_F(JobOutcomeTest, SigintToWattwiseIsForwardedAndItExits130AfterReporting) {
  const auto pid_file = path("job.pid");
  bool sent = false;
  SpawnOptions options;
  // Ctrl-C only once the job is surely running: it wrote its pid.
  options.while_running = [&](int wattwise_pid) {
    if (!sent && std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(wattwise_pid, SIGINT);
      sent = true;
    }
  };
  const auto r = measure_job({"pidfile", pid_file.string(), "30000"}, {}, options);
  ASSERT_TRUE(sent) << "the job never wrote its pid: " << r.err;
  ASSERT_FALSE(r.killed_by_guard);
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(r.wall_s, 5.0);
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 130);
  EXPECT_EQ(m.at("signal"), SIGINT);
  expect_energy_measured(m);

  long job_pid = 0;
  std::ifstream(pid_file) >> job_pid;
  ASSERT_GT(job_pid, 0);
  // The job is gone (not left sleeping in the background), allowing a moment for init to reap it.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = ::kill(static_cast<pid_t>(job_pid), 0) != 0 && errno == ESRCH;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "job " << job_pid << " still runs after wattwise exited";
}

TEST_F(JobOutcomeTest, GpusFlagMeasuresOnlyTheNamedGpu) {
  const auto r = measure_job({"sleep", "300"}, {"--gpus", "GPU-e2e-constant"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto m = read_json("m.json");
  ASSERT_EQ(m.at("gpus").size(), 1u);
  EXPECT_EQ(m["gpus"][0].at("uuid"), "GPU-e2e-constant");
  EXPECT_EQ(m["gpus"][0].at("index"), 1);
  const double wall_s = m.at("wall_s");
  EXPECT_NEAR(m.at("energy_j").get<double>(), kConstantPowerW * wall_s, 0.01 * kConstantPowerW * wall_s);
}

TEST_F(JobOutcomeTest, MarkersWithoutWattwiseAreSilentNoOps) {
  ASSERT_EQ(env_.count("WATTWISE_SOCKET"), 0u);
  const auto python =
      run({PYTHON3, std::string(E2E_JOBS_DIR) + "/two_clients.py", E2E_JOB, path("anchor.txt").string()});
  EXPECT_EQ(python.exit_code, 0) << python.err;
  EXPECT_EQ(python.err, "");
  EXPECT_EQ(python.out, "");
  EXPECT_FALSE(std::filesystem::exists(path("anchor.txt")));  // it saw no socket, so it sent nothing

  const auto c = run({E2E_JOB, "phases", "3", "10"});
  EXPECT_EQ(c.exit_code, 0) << c.err;  // 10 would mean a marker call failed
  EXPECT_EQ(c.err, "");
  EXPECT_EQ(c.out, "");
}

}  // namespace
}  // namespace wattwise::e2e
