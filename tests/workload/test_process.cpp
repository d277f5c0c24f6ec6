#include "workload/process.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace wattwise::workload {
namespace {

using namespace std::chrono_literals;

Process start_shell(const std::string& script, std::map<std::string, std::string> environment = {}) {
  return Process::start(LaunchSpec{{"sh", "-c", script}, std::move(environment), std::nullopt});
}

TEST(Process, SuccessfulJobExitsZero) {
  auto job = start_shell("exit 0");
  EXPECT_EQ(job.wait(), 0);
  EXPECT_FALSE(job.signal().has_value());
  EXPECT_FALSE(job.timed_out());
}

TEST(Process, ExitCodeIsPassedThrough) {
  auto job = start_shell("exit 3");
  EXPECT_EQ(job.wait(), 3);
  EXPECT_EQ(job.exit_code(), 3);
}

TEST(Process, KilledBySigkillReports137) {
  auto job = Process::start({{"sleep", "30"}, {}, std::nullopt});
  job.forward_signal(SIGKILL);
  EXPECT_EQ(job.wait(), 137);
  EXPECT_EQ(job.signal(), SIGKILL);
}

TEST(Process, ForwardedSigtermReports143) {
  auto job = Process::start({{"sleep", "30"}, {}, std::nullopt});
  job.forward_signal(SIGTERM);
  EXPECT_EQ(job.wait(), 143);
  EXPECT_EQ(job.signal(), SIGTERM);
}

TEST(Process, JobLeadsItsOwnProcessGroup) {
  auto job = Process::start({{"sleep", "30"}, {}, std::nullopt});
  EXPECT_EQ(::getpgid(job.pid()), job.pid());
  EXPECT_NE(::getpgid(job.pid()), ::getpgrp());
  job.forward_signal(SIGKILL);
  job.wait();
}

TEST(Process, SignalReachesTheJobsChildren) {
  // The shell ignores TERM but its background child does not: only a group-wide signal ends the child,
  // and `wait` then returns the child's status 143 as the shell's exit code.
  auto job = start_shell("trap '' TERM; (trap - TERM; exec sleep 30) & wait $!; exit $?");
  std::this_thread::sleep_for(500ms);  // let the child reset its TERM handler
  job.forward_signal(SIGTERM);
  EXPECT_EQ(job.wait({.timeout = 10s}), 143);
  EXPECT_FALSE(job.timed_out());
}

TEST(Process, TimeOutSendsSigtermToTheGroup) {
  auto job = Process::start({{"sleep", "30"}, {}, std::nullopt});
  auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(job.wait({.timeout = 100ms}), 143);
  EXPECT_TRUE(job.timed_out());
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(Process, TimeOutEscalatesToSigkillAfterTheGrace) {
  auto job = start_shell("trap '' TERM; sleep 30");
  EXPECT_EQ(job.wait({.timeout = 100ms, .kill_grace = 200ms}), 137);
  EXPECT_TRUE(job.timed_out());
  EXPECT_EQ(job.signal(), SIGKILL);
}

TEST(Process, JobFinishingBeforeTheTimeOutDidNotTimeOut) {
  auto job = start_shell("exit 4");
  EXPECT_EQ(job.wait({.timeout = 10s}), 4);
  EXPECT_FALSE(job.timed_out());
}

TEST(Process, EnvironmentIsPassedAndInherited) {
  ::setenv("WW_TEST_INHERITED", "yes", 1);
  auto job = start_shell(R"(test "$WW_TEST_EXTRA" = "hello world" && test "$WW_TEST_INHERITED" = yes)",
                         {{"WW_TEST_EXTRA", "hello world"}});
  EXPECT_EQ(job.wait(), 0);
}

TEST(Process, ArgumentsAreNotInterpretedByAShell) {
  auto job = Process::start({{"test", "$HOME", "=", "$HOME;exit 9"}, {}, std::nullopt});
  EXPECT_EQ(job.wait(), 1);  // `test` compared two different literal strings
}

TEST(Process, WorkingDirectoryIsUsed) {
  auto job = Process::start({{"sh", "-c", "test \"$(pwd)\" = /"}, {}, std::filesystem::path("/")});
  EXPECT_EQ(job.wait(), 0);
}

TEST(Process, MissingCommandIsAClearEnvironmentError) {
  try {
    Process::start({{"wattwise-no-such-command"}, {}, std::nullopt});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(error.what()).find("command not found: wattwise-no-such-command"),
              std::string::npos);
  }
}

TEST(Process, MissingPathIsReportedThroughTheExecPipe) {
  try {
    Process::start({{"/nonexistent/dir/train"}, {}, std::nullopt});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kEnvironment);
    EXPECT_EQ(std::string(error.what()), "command not found: /nonexistent/dir/train");
  }
}

TEST(Process, NonExecutableFileIsAClearError) {
  std::string path = testing::TempDir() + "ww_not_executable.sh";
  std::ofstream(path) << "#!/bin/sh\nexit 0\n";
  ::chmod(path.c_str(), 0600);
  try {
    Process::start({{path}, {}, std::nullopt});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot execute"), std::string::npos) << error.what();
  }
  std::remove(path.c_str());
}

TEST(Process, EmptyCommandIsAUsageError) {
  try {
    Process::start({{}, {}, std::nullopt});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  }
}

TEST(Process, PollSeesTheEnd) {
  auto job = start_shell("exit 5");
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!job.poll() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(job.finished());
  EXPECT_EQ(job.exit_code(), 5);
}

TEST(Process, DestroyingARunningJobKillsIt) {
  pid_t pid;
  {
    auto job = Process::start({{"sleep", "30"}, {}, std::nullopt});
    pid = job.pid();
  }
  EXPECT_NE(::kill(pid, 0), 0);  // reaped: the pid is gone
}

}  // namespace
}  // namespace wattwise::workload
