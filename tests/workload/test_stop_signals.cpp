// The one stop-signal mechanism: recorded always, passed on to the job's process group while one runs.
#include "workload/stop_signals.hpp"

#include <poll.h>
#include <signal.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "workload/process.hpp"
#include "../support/default_signals.hpp"

namespace wattwise::workload {
namespace {

// These tests raise stop signals at themselves: they must be handled here even when the test runner was
// started with one ignored (nohup, a script's background job), which wattwise's StopSignals would respect.
const bool kDefaultStopSignals = (wattwise::testing::default_stop_signals(), true);

using namespace std::chrono_literals;

Process start_sleep() {
  return Process::start({{"sleep", "30"}, {}, std::nullopt});
}

TEST(StopSignals, WithoutAJobTheFirstSignalIsRecordedAndGivesTheShellExitCode) {
  StopSignals signals;
  EXPECT_FALSE(StopSignals::stop_requested());
  EXPECT_EQ(StopSignals::count(), 0);
  ::raise(SIGTERM);
  ::raise(SIGINT);
  EXPECT_TRUE(StopSignals::stop_requested());
  EXPECT_EQ(StopSignals::signal_number(), SIGTERM);
  EXPECT_EQ(StopSignals::exit_code(), 128 + SIGTERM);
  EXPECT_EQ(StopSignals::count(), 2);
  EXPECT_EQ(StopSignals::received_signals(), (std::vector<int>{SIGINT, SIGTERM}));
  pollfd wake{StopSignals::wake_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&wake, 1, 0), 1);
}

TEST(StopSignals, ForwardsToTheJobsGroupFromTheMomentItIsStarted) {
  StopSignals signals;
  auto job = start_sleep();  // Process::start hands the job's group to StopSignals
  EXPECT_EQ(StopSignals::job_group(), job.process_group());
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(job.wait({.timeout = 10s}), 143);
  EXPECT_FALSE(job.timed_out());
  EXPECT_EQ(StopSignals::signal_number(), SIGTERM);
  EXPECT_EQ(StopSignals::job_group(), 0);  // the job ended: nothing to forward to
}

// A signal between "the sweep decided to start a run" and the job's fork must not be lost: it is passed
// on when the group becomes known, exactly once.
TEST(StopSignals, ASignalBeforeTheJobExistsIsPassedOnWhenItStarts) {
  StopSignals signals;
  ::raise(SIGHUP);
  auto job = start_sleep();
  EXPECT_EQ(job.wait({.timeout = 10s}), 128 + SIGHUP);
  EXPECT_FALSE(job.timed_out());
}

TEST(StopSignals, ASignalRecordedBeforeTheGroupWasKnownIsPassedOnOnlyOnce) {
  const std::string ready = ::testing::TempDir() + "ww_stop_once_ready";
  std::remove(ready.c_str());
  // Started before StopSignals exist, so the group is handed over below, by hand. The job counts the
  // SIGINTs it gets: exactly one must arrive.
  auto job =
      Process::start({{"sh", "-c",
                       "n=0; trap 'n=$((n+1))' INT; touch \"$0\"; for i in $(seq 30); do sleep 0.05; done; "
                       "exit $n",
                       ready},
                      {},
                      std::nullopt});
  for (int i = 0; i < 1000 && ::access(ready.c_str(), F_OK) != 0; ++i) std::this_thread::sleep_for(5ms);
  StopSignals signals;
  ::raise(SIGINT);
  StopSignals::set_job_group(job.process_group());
  EXPECT_EQ(job.wait({.timeout = 20s}), 1);
  std::remove(ready.c_str());
}

extern "C" void previous_handler(int) {}

TEST(StopSignals, PutsThePreviousHandlerBack) {
  struct sigaction previous {};
  previous.sa_handler = previous_handler;
  struct sigaction saved {};
  ::sigaction(SIGHUP, &previous, &saved);
  {
    StopSignals signals;
    struct sigaction during {};
    ::sigaction(SIGHUP, nullptr, &during);
    EXPECT_NE(during.sa_handler, previous_handler);
    EXPECT_TRUE(StopSignals::installed());
  }
  EXPECT_FALSE(StopSignals::installed());
  struct sigaction after {};
  ::sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, previous_handler);
  ::sigaction(SIGHUP, &saved, nullptr);
}

TEST(StopSignals, ASignalIgnoredAtTheStartStaysIgnoredAsUnderNohup) {
  // nohup starts wattwise with SIGHUP ignored: a hangup must not stop it, and SIGTERM still must.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction saved {};
  ::sigaction(SIGHUP, &ignore, &saved);
  {
    StopSignals signals;
    EXPECT_TRUE(StopSignals::ignored_at_start(SIGHUP));
    EXPECT_FALSE(StopSignals::ignored_at_start(SIGTERM));
    ::raise(SIGHUP);
    EXPECT_FALSE(StopSignals::stop_requested()) << "the hangup was recorded although nohup ignored it";
    EXPECT_EQ(StopSignals::count(), 0);
    ::raise(SIGTERM);
    EXPECT_EQ(StopSignals::signal_number(), SIGTERM);
  }
  struct sigaction after {};
  ::sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
  ::sigaction(SIGHUP, &saved, nullptr);
}

TEST(StopSignals, OnlyOneAtATime) {
  StopSignals first;
  EXPECT_THROW(StopSignals second, Error);
}

}  // namespace
}  // namespace wattwise::workload
