// Nothing of a job outlives it: a job that ignores the stop signal is killed after the grace period (at once
// on a second signal), its leftovers are killed when it ends, and its group dies with its owner.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../support/proc_file.hpp"
#include "workload/child_processes.hpp"
#include "workload/process.hpp"
#include "workload/stop_signals.hpp"
#include "../support/default_signals.hpp"

namespace wattwise::workload {
namespace {

// These tests raise stop signals at themselves: they must be handled here even when the test runner was
// started with one ignored (nohup, a script's background job), which wattwise's StopSignals would respect.
const bool kDefaultStopSignals = (wattwise::testing::default_stop_signals(), true);

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string temp_path(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  std::remove(path.c_str());
  return path;
}

// The pid a job wrote to `path`, polling until it is there.
pid_t read_pid(const std::string& path, std::chrono::milliseconds timeout = 10s) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    long pid = 0;
    std::ifstream in(path);
    if (in >> pid && pid > 0) return static_cast<pid_t>(pid);
    std::this_thread::sleep_for(5ms);
  }
  return 0;
}

// Alive: exists and is not a zombie waiting for its parent (init reaps those a moment later).
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::string text = wattwise::testing::read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close_paren = text.rfind(')');
  return close_paren == std::string::npos || text.size() < close_paren + 3 || text[close_paren + 2] != 'Z';
}

// Any member of process group `group` that is alive (zombies waiting for init do not count).
bool group_alive(pid_t group) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string text = wattwise::testing::read_proc_file(entry.path() / "stat");
    const auto close_paren = text.rfind(')');
    if (close_paren == std::string::npos) continue;
    char state = '?';
    long parent = 0, process_group = 0;
    if (std::sscanf(text.c_str() + close_paren + 1, " %c %ld %ld", &state, &parent, &process_group) != 3)
      continue;
    if (process_group == group && state != 'Z') return true;
  }
  return false;
}

bool gone_within(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (alive(pid)) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

TEST(JobStop, AJobThatIgnoresTheStopSignalIsKilledAfterTheGrace) {
  StopSignals signals;
  // `trap ''` makes the shell and its sleep ignore TERM: only SIGKILL ends this job.
  const std::string ready = temp_path("ww_ignore_ready");
  auto job =
      Process::start({{"sh", "-c", "trap '' TERM; echo $$ > \"$0\"; sleep 30", ready}, {}, std::nullopt});
  ASSERT_GT(read_pid(ready), 0);
  const auto started = Clock::now();
  ::raise(SIGTERM);
  EXPECT_EQ(job.wait({.timeout = std::nullopt, .kill_grace = 5s, .stop_grace = 300ms}), 137);
  EXPECT_EQ(job.signal(), SIGKILL);
  EXPECT_FALSE(job.timed_out());
  EXPECT_GE(Clock::now() - started, 300ms);
  EXPECT_LT(Clock::now() - started, 8s);
}

TEST(JobStop, ASecondStopSignalKillsTheJobAtOnce) {
  StopSignals signals;
  const std::string ready = temp_path("ww_ignore_int_ready");
  auto job =
      Process::start({{"sh", "-c", "trap '' INT; echo $$ > \"$0\"; sleep 30", ready}, {}, std::nullopt});
  ASSERT_GT(read_pid(ready), 0);
  const auto started = Clock::now();
  ::raise(SIGINT);
  std::thread second_ctrl_c([] {
    std::this_thread::sleep_for(200ms);
    ::kill(::getpid(), SIGINT);
  });
  EXPECT_EQ(job.wait({.timeout = std::nullopt, .kill_grace = 5s, .stop_grace = 60s}), 137);
  second_ctrl_c.join();
  EXPECT_LT(Clock::now() - started, 8s);
  EXPECT_EQ(StopSignals::count(), 2);
}

TEST(JobStop, AJobThatHandlesTheSignalAndExitsZeroIsLeftToFinish) {
  StopSignals signals;
  const std::string ready = temp_path("ww_trap_ready");
  auto job = Process::start(
      {{"sh", "-c", "trap 'exit 0' TERM; echo $$ > \"$0\"; while :; do sleep 0.02; done", ready},
       {},
       std::nullopt});
  ASSERT_GT(read_pid(ready), 0);
  ::raise(SIGTERM);
  EXPECT_EQ(job.wait({.timeout = std::nullopt, .kill_grace = 5s, .stop_grace = 20s}),
            0);  // its own status: what the run means is the caller's call
  EXPECT_EQ(StopSignals::signal_number(), SIGTERM);
}

TEST(JobLeftovers, WhatIsLeftOfTheGroupWhenTheLeaderEndsIsKilled) {
  const std::string pid_file = temp_path("ww_leftover_pid");
  auto job =
      Process::start({{"sh", "-c", "sleep 30 & echo $! > \"$0\"; exit 0", pid_file}, {}, std::nullopt});
  EXPECT_EQ(job.wait({.timeout = 10s}), 0);
  const pid_t background = read_pid(pid_file);
  ASSERT_GT(background, 0);
  EXPECT_FALSE(alive(background)) << "the job's background child " << background << " outlived it";
  EXPECT_GE(job.leftovers_killed(), 1u);
}

// A daemon that double-forks into its own session escapes the group: as the subreaper we get it back
// and end it with the job.
TEST(JobLeftovers, ADaemonThatLeftTheGroupIsKilledWhenTheJobEnds) {
  const std::string pid_file = temp_path("ww_daemon_pid");
  auto job = Process::start(
      {{"sh", "-c", "(setsid sleep 30 & echo $! > \"$0\") ; sleep 0.3; exit 0", pid_file}, {}, std::nullopt});
  const pid_t daemon = read_pid(pid_file);
  ASSERT_GT(daemon, 0);
  EXPECT_EQ(job.wait({.timeout = 10s}), 0);
  EXPECT_TRUE(gone_within(daemon, 2s)) << "the daemon " << daemon << " outlived the job";
  EXPECT_GE(job.leftovers_killed(), 1u);
}

TEST(JobLeftovers, ChildrenThatExistedBeforeTheJobAreLeftAlone) {
  const pid_t bystander = ::fork();
  if (bystander == 0) {
    ::pause();
    ::_exit(0);
  }
  auto job = Process::start({{"sh", "-c", "exit 0"}, {}, std::nullopt});
  EXPECT_EQ(job.wait({.timeout = 10s}), 0);
  EXPECT_TRUE(alive(bystander));
  ::kill(bystander, SIGKILL);
  ::waitpid(bystander, nullptr, 0);
}

// The guardian, tested alone: a process that started a job is killed with SIGKILL; the job's whole
// group (a shell and its sleep) must end, not live on with PPID 1.
TEST(JobGuardian, KillsTheJobsGroupWhenItsOwnerIsKilled) {
  const std::string pid_file = temp_path("ww_guarded_pid");
  const pid_t owner = ::fork();
  if (owner == 0) {
    auto job =
        Process::start({{"sh", "-c", "echo $$ > \"$0\"; sleep 30 & wait", pid_file}, {}, std::nullopt});
    ::pause();
    ::_exit(0);
  }
  const pid_t group = read_pid(pid_file);
  ASSERT_GT(group, 0);
  std::this_thread::sleep_for(100ms);  // let the shell start its sleep
  ::kill(owner, SIGKILL);
  ::waitpid(owner, nullptr, 0);
  const auto deadline = Clock::now() + 5s;
  bool group_gone = !group_alive(group);
  while (!group_gone && Clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    group_gone = !group_alive(group);
  }
  EXPECT_TRUE(group_gone) << "the job's group " << group << " outlived its owner";
}

}  // namespace
}  // namespace wattwise::workload
