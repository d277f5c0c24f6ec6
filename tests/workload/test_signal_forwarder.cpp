#include "workload/signal_forwarder.hpp"

#include <poll.h>
#include <signal.h>

#include <chrono>

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "workload/process.hpp"

namespace wattwise::workload {
namespace {

using namespace std::chrono_literals;

Process start_sleep() {
  return Process::start({{"sleep", "30"}, {}, std::nullopt});
}

TEST(SignalForwarder, ForwardsSigtermToTheJobAndRemembersIt) {
  auto job = start_sleep();
  SignalForwarder forwarder(job.process_group());
  ASSERT_EQ(::raise(SIGTERM), 0);
  EXPECT_EQ(job.wait({.timeout = 10s}), 143);
  EXPECT_FALSE(job.timed_out());
  EXPECT_EQ(forwarder.first_signal(), SIGTERM);
  EXPECT_EQ(forwarder.received_signals(), std::vector<int>{SIGTERM});
}

TEST(SignalForwarder, RemembersTheFirstOfSeveralSignals) {
  auto job = Process::start({{"sh", "-c", "trap '' INT HUP; sleep 30"}, {}, std::nullopt});
  SignalForwarder forwarder(job.process_group());
  ::raise(SIGHUP);
  ::raise(SIGINT);
  EXPECT_EQ(forwarder.first_signal(), SIGHUP);
  EXPECT_EQ(forwarder.received_signals(), (std::vector<int>{SIGHUP, SIGINT}));
  pollfd wake{forwarder.wake_fd(), POLLIN, 0};
  EXPECT_EQ(::poll(&wake, 1, 0), 1);
  job.forward_signal(SIGKILL);
  job.wait();
}

TEST(SignalForwarder, RestoresThePreviousHandler) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction saved {};
  ::sigaction(SIGHUP, &ignore, &saved);
  {
    auto job = start_sleep();
    SignalForwarder forwarder(job.process_group());
    struct sigaction during {};
    ::sigaction(SIGHUP, nullptr, &during);
    EXPECT_NE(during.sa_handler, SIG_IGN);
    job.forward_signal(SIGKILL);
    job.wait();
  }
  struct sigaction after {};
  ::sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
  ::sigaction(SIGHUP, &saved, nullptr);
}

TEST(SignalForwarder, OnlyOneAtATime) {
  auto job = start_sleep();
  SignalForwarder first(job.process_group());
  EXPECT_THROW(SignalForwarder second(job.process_group()), Error);
  job.forward_signal(SIGKILL);
  job.wait();
}

}  // namespace
}  // namespace wattwise::workload
