// How the job ends, and what wattwise makes of it: malformed markers, signals, exit codes, time-outs,
// Ctrl-C, and markers from a job that runs without wattwise.
#include <gtest/gtest.h>

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <thread>

#include "e2e_fixture.hpp"
#include "../support/proc_file.hpp"

namespace wattwise::e2e {
namespace {

// The pid a job wrote to `path`, 0 while it has not.
pid_t pid_in(const std::filesystem::path& path) {
  long pid = 0;
  std::ifstream in(path);
  return (in >> pid && pid > 0) ? static_cast<pid_t>(pid) : 0;
}

// Live processes (zombies waiting for init do not count) with this pid, or in this process group.
bool any_alive(pid_t pid, pid_t process_group) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string text = wattwise::testing::read_proc_file(entry.path() / "stat");
    const auto close_paren = text.rfind(')');
    if (close_paren == std::string::npos) continue;
    char state = '?';
    long parent = 0, group = 0;
    if (std::sscanf(text.c_str() + close_paren + 1, " %c %ld %ld", &state, &parent, &group) != 3) continue;
    if (state != 'Z' && (std::stol(name) == pid || (process_group > 0 && group == process_group)))
      return true;
  }
  return false;
}

bool gone_within(pid_t pid, pid_t process_group, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (any_alive(pid, process_group)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::string job_script(const std::string& name) {
  return std::string(E2E_JOBS_DIR) + "/" + name;
}

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
  // `measure` of a helper job in tests/e2e/jobs (run by sh).
  ProcessResult measure_script(const std::string& script, const std::vector<std::string>& script_args,
                               SpawnOptions options = {}) {
    std::vector<std::string> args = {"measure", "--json",  path("m.json").string(),
                                     "--",      "/bin/sh", job_script(script)};
    args.insert(args.end(), script_args.begin(), script_args.end());
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

TEST_F(JobOutcomeTest, JsonOnStdoutStaysValidWhenTheJobPrintsAndTheJobsOutputGoesToStderr) {
  const auto r = wattwise({"measure", "--json", "-", "--", "/bin/sh", "-c",
                           "echo chatty-stdout; echo chatty-stderr >&2; sleep 0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto m = nlohmann::json::parse(r.out);  // throws (fails the test) on anything but the JSON
  EXPECT_EQ(m.at("exit_code"), 0);
  EXPECT_NE(r.err.find("chatty-stdout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("chatty-stderr"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("wall time"), std::string::npos) << "the summary goes to stderr: " << r.err;
}

// On a terminal (here util-linux's `script` gives wattwise one) a live line shows the energy so far while the
// job runs; off a terminal (every other test) there is none, so logs stay clean.
TEST_F(JobOutcomeTest, OnATerminalALiveLineShowsTheEnergySoFarWhileTheJobRuns) {
  if (!std::filesystem::exists("/usr/bin/script"))
    GTEST_SKIP() << "no /usr/bin/script (util-linux) for a pty";
  const std::string command = std::string(WATTWISE_BIN) + " measure -- /bin/sleep 2.5";
  const auto r = run({"/usr/bin/script", "-qfec", command, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("so far |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wall time"), std::string::npos) << r.out;
  const auto quiet = run({"/usr/bin/script", "-qfec", command + " --no-status", "/dev/null"});
  EXPECT_EQ(quiet.out.find("so far"), std::string::npos) << quiet.out;
  const auto piped = wattwise({"measure", "--", "/bin/sleep", "1.5"});
  EXPECT_EQ(piped.err.find("so far"), std::string::npos) << piped.err;
}

TEST_F(JobOutcomeTest, WithoutJsonOnStdoutTheJobKeepsItsStdout) {
  const auto r = wattwise({"measure", "--", "/bin/sh", "-c", "echo chatty-stdout"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("chatty-stdout\n", 0), 0u) << r.out;
}

TEST_F(JobOutcomeTest, MalformedMarkersAreCountedNotFatal) {
  const auto r = measure_job({"garbage"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("wattwise:"), std::string::npos) << r.err;  // counted in the summary, not an error
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
  const auto status_at = r.err.find("exit status");
  ASSERT_NE(status_at, std::string::npos) << r.err;
  const auto status_line = r.err.substr(status_at, r.err.find('\n', status_at) - status_at);
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

TEST_F(JobOutcomeTest, UnderNohupAHangupDoesNotStopTheMeasurement) {
  // `nohup wattwise measure ...` over ssh: the terminal's hangup must not end the measurement (nor reach
  // the job through wattwise); the job runs to its end and wattwise reports it as usual.
  const auto pid_file = path("job.pid");
  bool sent = false;
  SpawnOptions options;
  options.while_running = [&](int wattwise_pid) {  // nohup execs wattwise: the same pid
    if (!sent && std::filesystem::exists(pid_file) && std::filesystem::file_size(pid_file) > 0) {
      ::kill(wattwise_pid, SIGHUP);
      sent = true;
    }
  };
  const auto r = run({"/usr/bin/nohup", WATTWISE_BIN, "measure", "--json", path("m.json").string(), "--trace",
                      path("t.csv").string(), "--",
                      E2E_JOB, "pidfile", pid_file.string(), "1500"},
                     options);
  ASSERT_TRUE(sent) << "the job never wrote its pid: " << r.err;
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.wall_s, 1.4) << "the job ran its 1.5 s";
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 0);
  EXPECT_TRUE(m.at("signal").is_null());
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

// issue 10, item 5: the job handles SIGTERM (a checkpoint) and exits 0. wattwise was asked to stop: it
// reports the measurement (the job's own status 0 in the JSON) and exits 143, not 0.
TEST_F(JobOutcomeTest, SigtermToWattwiseWhoseJobHandlesItAndExitsZeroStillExits143) {
  const auto pid_file = path("job.pid");
  bool sent = false;
  SpawnOptions options;
  options.while_running = [&](int wattwise_pid) {
    if (!sent && pid_in(pid_file) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ::kill(wattwise_pid, SIGTERM);
      sent = true;
    }
  };
  const auto r = measure_script("trap_stop_exit0.sh", {pid_file.string(), "1500"}, options);
  ASSERT_TRUE(sent) << r.err;
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_LT(r.wall_s, 10.0);
  EXPECT_NE(r.err.find("stopped by SIGTERM"), std::string::npos) << r.err;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 0);
}

// issue 10, item 5: a job that ignores the stop signals made `measure` unstoppable. The first Ctrl-C is
// passed on with a grace period (said on stderr); a second kills the job's group at once.
TEST_F(JobOutcomeTest, AJobThatIgnoresStopSignalsIsKilledOnTheSecondCtrlC) {
  const auto pid_file = path("job.pid");
  int sent = 0;
  std::chrono::steady_clock::time_point first_at;
  SpawnOptions options;
  options.while_running = [&](int wattwise_pid) {
    if (sent == 0 && pid_in(pid_file) > 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ::kill(wattwise_pid, SIGINT);
      first_at = std::chrono::steady_clock::now();
      sent = 1;
    } else if (sent == 1 && std::chrono::steady_clock::now() - first_at > std::chrono::milliseconds(500)) {
      ::kill(wattwise_pid, SIGINT);
      sent = 2;
    }
  };
  const auto r = measure_script("ignore_stop.sh", {pid_file.string()}, options);
  ASSERT_EQ(sent, 2) << r.err;
  ASSERT_FALSE(r.killed_by_guard) << r.err;
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(r.wall_s, 8.0);
  EXPECT_NE(r.err.find("is killed if it has not ended in 10 s"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("second stop signal"), std::string::npos) << r.err;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("signal"), SIGKILL);
  const pid_t job = pid_in(pid_file);
  EXPECT_TRUE(gone_within(job, job, std::chrono::seconds(3))) << "the job's group " << job << " lives on";
}

// issue 10, item 6: kill -9 of wattwise. The job (a shell with a child) and the daemon it forked into its
// own session must not live on with PPID 1: the guardian ends them within a few seconds.
TEST_F(JobOutcomeTest, KillMinus9OfWattwiseLeavesNoProcessOfTheJob) {
  const auto daemon_file = path("daemon.pid");
  const auto job_file = path("job.pid");
  bool killed = false;
  std::chrono::steady_clock::time_point started_at;
  SpawnOptions options;
  options.while_running = [&](int wattwise_pid) {
    if (started_at == std::chrono::steady_clock::time_point{} && pid_in(job_file) > 0)
      started_at = std::chrono::steady_clock::now();
    // Past wattwise's half-second look for daemons reparented to it, so the guardian knows this one.
    if (!killed && started_at != std::chrono::steady_clock::time_point{} &&
        std::chrono::steady_clock::now() - started_at > std::chrono::milliseconds(1200)) {
      ::kill(wattwise_pid, SIGKILL);
      killed = true;
    }
  };
  const auto r = measure_script("fork_daemon.sh", {daemon_file.string(), job_file.string(), "600"}, options);
  ASSERT_TRUE(killed) << r.err;
  EXPECT_EQ(r.signal, SIGKILL);
  const pid_t job = pid_in(job_file);
  const pid_t daemon = pid_in(daemon_file);
  ASSERT_GT(job, 0);
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(gone_within(job, job, std::chrono::seconds(5))) << "the job's group " << job << " lives on";
  EXPECT_TRUE(gone_within(daemon, daemon, std::chrono::seconds(5)))
      << "the job's daemon " << daemon << " lives on";
  ::kill(-job, SIGKILL);  // on failure, leave nothing behind for the next test
  ::kill(-daemon, SIGKILL);
}

// Processes whose command line contains `text` (the job's unique pid-file path), zombies excluded.
bool any_alive_with_argument(const std::string& text) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string cmdline = wattwise::testing::read_proc_file(entry.path() / "cmdline");
    if (cmdline.find(text) != std::string::npos && any_alive(static_cast<pid_t>(std::stol(name)), 0))
      return true;
  }
  return false;
}

// issue 10, item 6: kill -9 of `measure` anywhere between its start and the job's end (before the fork,
// between fork and exec, while the job runs): no process of the job survives it. Seeded, the seed logged.
TEST_F(JobOutcomeTest, KillMinus9AtRandomMomentsLeavesNoOrphan) {
  constexpr unsigned kSeed = 20261123;
  constexpr int kTrials = 20;
  std::mt19937 random(kSeed);
  // The moments span wattwise's start-up as this machine runs it: the first trial kills once the job
  // runs and times that start-up (60 ms idle, several times more on a loaded CI machine), most others draw
  // from 0 to 1.5 times it, so about a third fall before the job runs and the rest while it runs. One trial
  // in four kills only once the job runs (its pid file written), up to half a start-up later, and re-times
  // the start-up: a start-up timed once, idle, then slower under a starved runner left only 3 of 20 kills
  // on running jobs (CI-like two busy loops, start-up 71 ms), and the running case is the one the
  // guardian exists for.
  std::chrono::milliseconds startup{0};
  int killed_while_running = 0;
  int killed_before_running = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const auto pid_file = path("job-" + std::to_string(trial) + ".pid");
    const bool once_running = trial % 4 == 0;
    std::uniform_int_distribution<std::int64_t> delay_ms(0, startup.count() * (once_running ? 1 : 3) / 2);
    const auto delay = std::chrono::milliseconds(trial == 0 ? 0 : delay_ms(random));
    std::chrono::steady_clock::time_point spawned{};
    std::chrono::steady_clock::time_point running_at{};
    bool killed = false;
    SpawnOptions options;
    options.while_running = [&](int wattwise_pid) {
      const auto now = std::chrono::steady_clock::now();
      if (spawned == std::chrono::steady_clock::time_point{}) spawned = now;
      if (killed) return;
      if (once_running) {
        if (running_at == std::chrono::steady_clock::time_point{}) {
          if (pid_in(pid_file) <= 0) return;
          running_at = now;
          startup = std::chrono::duration_cast<std::chrono::milliseconds>(now - spawned);
        }
        if (now - running_at < delay) return;
      } else if (now - spawned < delay) {
        return;
      }
      ++(pid_in(pid_file) > 0 ? killed_while_running : killed_before_running);
      ::kill(wattwise_pid, SIGKILL);
      killed = true;
    };
    const auto r = measure_script("ignore_stop.sh", {pid_file.string()}, options);
    ASSERT_TRUE(killed) << "seed " << kSeed << " trial " << trial << ": " << r.err;
    const pid_t job = pid_in(pid_file);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    bool gone = false;
    while (!gone && std::chrono::steady_clock::now() < deadline) {
      gone = !any_alive_with_argument(pid_file.string()) && (job <= 0 || !any_alive(job, job));
      if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(gone) << "seed " << kSeed << " trial " << trial << " (delay " << delay.count()
                      << " ms): the job outlived wattwise";
    if (job > 0) ::kill(-job, SIGKILL);
  }
  std::printf("kill -9 of measure: seed %u, %d trials, %d while the job ran, %d before (start-up %lld ms)\n",
              kSeed, kTrials, killed_while_running, killed_before_running,
              static_cast<long long>(startup.count()));
  EXPECT_GE(killed_while_running, kTrials / 4) << "the kills must hit running jobs, or this proved little";
}

// issue 10, item 6: a daemon the job double-forked into its own session escaped its process group; it is
// killed when the job ends, and wattwise says so.
TEST_F(JobOutcomeTest, ADaemonForkedByTheJobDoesNotOutliveIt) {
  const auto daemon_file = path("daemon.pid");
  const auto r = measure_script("fork_daemon.sh", {daemon_file.string(), path("job.pid").string(), "0.2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const pid_t daemon = pid_in(daemon_file);
  ASSERT_GT(daemon, 0);
  EXPECT_TRUE(gone_within(daemon, daemon, std::chrono::seconds(3))) << "the daemon " << daemon << " lives on";
  EXPECT_NE(r.err.find("the job left 1 process running after it ended"), std::string::npos) << r.err;
  ::kill(-daemon, SIGKILL);
}

// issue 10, item 6: the forwarder's handler was installed only while the job ran, so a SIGTERM in the tail
// of sampling after the job (250 ms) or during the accounting killed wattwise with nothing written. Now the
// one handler is there from start to exit: the signal is recorded, the result written, exit 143.
TEST_F(JobOutcomeTest, SigtermAfterTheJobEndedIsRecordedAndTheResultStillWritten) {
  const auto pid_file = path("job.pid");
  bool sent = false;
  SpawnOptions options;
  options.while_running = [&](int wattwise_pid) {
    const pid_t job = pid_in(pid_file);
    if (sent || job <= 0 || any_alive(job, 0)) return;
    ::kill(wattwise_pid, SIGTERM);  // the job has just ended: wattwise is in its tail
    sent = true;
  };
  const auto r = measure_job({"pidfile", pid_file.string(), "200"}, {}, options);
  ASSERT_TRUE(sent) << r.err;
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("exit_code"), 0);  // the job ended by itself
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
