#include "safety/stop_signals.hpp"

#include <gtest/gtest.h>
#include <signal.h>

namespace wattwise::experiment {
namespace {

TEST(StopSignals, RecordsTheFirstSignalAndGivesTheShellExitCode) {
  safety::StopSignals signals;
  EXPECT_FALSE(safety::StopSignals::stop_requested());
  ::raise(SIGTERM);
  ::raise(SIGINT);
  EXPECT_TRUE(safety::StopSignals::stop_requested());
  EXPECT_EQ(safety::StopSignals::signal_number(), SIGTERM);
  EXPECT_EQ(safety::StopSignals::exit_code(), 128 + SIGTERM);
}

TEST(StopSignals, PutsThePreviousHandlerBack) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction before {};
  sigaction(SIGHUP, &ignore, &before);
  {
    safety::StopSignals signals;
    struct sigaction during {};
    sigaction(SIGHUP, nullptr, &during);
    EXPECT_NE(during.sa_handler, SIG_IGN);
  }
  struct sigaction after {};
  sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN);
  sigaction(SIGHUP, &before, nullptr);
}

TEST(StopSignals, SecondInstanceIsRefused) {
  safety::StopSignals signals;
  EXPECT_ANY_THROW(safety::StopSignals second);
}

}  // namespace
}  // namespace wattwise::experiment
