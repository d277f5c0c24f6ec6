// The per-node agent of a multi-node sweep (`measure --power-limit W`) under the signals SLURM sends when it
// ends a step: SIGTERM to every process of the step (the watchdog included), then SIGKILL. The watchdog must
// outlive the SIGTERM so that it can restore when its agent is SIGKILLed (docs/slurm.md).
#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "safety_support.hpp"

namespace wattwise::safety {
namespace {

TEST(NodeAgent, ItsWatchdogIgnoresSigtermAndRestoresWhenTheAgentIsThenKilled) {
  SafetyWorld world;  // both GPUs at a site's cap of 650 W
  WattwiseProcess agent(world.dir(), {"measure", "--power-limit", "300", "--", "sleep", "5"});
  std::optional<pid_t> watchdog;
  for (int i = 0; i < 1000 && !(watchdog = agent.watchdog_pid()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(watchdog.has_value());
  // At once too, while the watchdog may still be starting up (parsing its command line): a SIGTERM there
  // once ended it before it could restore (CI, loaded machine).
  ::kill(*watchdog, SIGTERM);
  for (int i = 0; i < 1000 && !world.all_at_w(300); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(world.all_at_w(300));
  ::kill(*watchdog, SIGTERM);  // as slurmstepd signals every process of a step it ends
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(*watchdog, 0), 0) << "the watchdog died of SIGTERM";
  agent.signal(SIGKILL);
  agent.wait();
  EXPECT_TRUE(world.wait_restored(650)) << "limits " << world.limits_w().begin()->second << " W";
  EXPECT_TRUE(world.journals().empty());
}

TEST(NodeAgent, SigtermToTheAgentStopsItsJobAndRestoresBeforeItExits) {
  SafetyWorld world;
  WattwiseProcess agent(world.dir(), {"measure", "--power-limit", "300", "--", "sleep", "5"});
  for (int i = 0; i < 1000 && !world.all_at_w(300); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(world.all_at_w(300));
  agent.signal(SIGTERM);
  const Finished f = agent.wait();
  EXPECT_EQ(f.exit_code, 128 + SIGTERM) << f.err;
  EXPECT_TRUE(world.all_at_w(650)) << f.err;  // restored by the agent itself, before it exited
  EXPECT_TRUE(world.journals().empty());
}

}  // namespace
}  // namespace wattwise::safety
