#include <gtest/gtest.h>
#include <signal.h>

#include <random>
#include <thread>

#include "safety_support.hpp"

namespace wattwise::safety {
namespace {

constexpr int kTrials = 50;

// SIGKILL cannot be caught: the watchdog must restore, wherever wattwise was (starting, capturing,
// applying, measuring, storing, restoring). Each trial is a short sweep killed after a random delay.
TEST(SigkillAtRandomMoments, TheWatchdogAlwaysRestoresEveryGpu) {
  SafetyWorld world;
  std::mt19937 random(20261122);
  std::uniform_int_distribution<int> delay_ms(0, 900);
  int killed_while_changed = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const auto db = world.dir() / ("kill-" + std::to_string(trial) + ".db");
    WattwiseProcess wattwise(
        world.dir(), {"sweep", "--power-limit", "250,350,450", "--db", db.string(), "--", "sleep", "0.08"});
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(random)));
    if (!world.all_at_w(650)) ++killed_while_changed;
    wattwise.signal(SIGKILL);
    const Finished f = wattwise.wait();
    ASSERT_TRUE(world.wait_restored(650))
        << "trial " << trial << ": limits " << world.limits_w().begin()->second
        << " W; wattwise said: " << f.err;
  }
  // The kills must have hit sweeps that had changed the limit, or the test proved nothing.
  EXPECT_GE(killed_while_changed, kTrials / 4);
}

// Both wattwise and its watchdog killed (power loss looks the same): the journal stays, every command
// warns about it, and `wattwise restore` puts the limits back, per GPU, even when one GPU fails at first.
TEST(WatchdogAlsoKilled, RestoreAppliesTheStaleJournalAndEveryCommandWarns) {
  SafetyWorld world;
  {
    WattwiseProcess wattwise(world.dir(), {"sweep", "--power-limit", "300", "--db",
                                           (world.dir() / "a.db").string(), "--", "sleep", "1"});
    ASSERT_TRUE(world.wait_for_journal());
    std::optional<pid_t> watchdog;
    for (int i = 0; i < 500 && !(watchdog = wattwise.watchdog_pid()); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ASSERT_TRUE(watchdog.has_value());
    // Killed once every GPU has the sweep's 300 W (the guard sets them one after another: killing after the
    // first left the second at 650 W, and the journal's restore then had nothing to put back there).
    for (int i = 0; i < 1000 && !world.all_at_w(300); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(world.all_at_w(300));
    ::kill(-*watchdog, SIGKILL);  // its process group: it leads its own session
    wattwise.signal(SIGKILL);
    wattwise.wait();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(world.all_at_w(300));
  ASSERT_EQ(world.journals().size(), 1u);

  const std::string warning = "stale settings journal";
  EXPECT_NE(run_wattwise(world.dir(), {"info"}).err.find(warning), std::string::npos);
  EXPECT_NE(run_wattwise(world.dir(), {"measure", "--", "true"}).err.find(warning), std::string::npos);
  EXPECT_NE(run_wattwise(world.dir(), {"sweep", "--power-limit", "300", "--dry-run", "--", "true"})
                .err.find(warning),
            std::string::npos);

  // GPU bbbb refuses every limit for now: aaaa is restored all the same, the journal is kept.
  auto config = two_capped_gpus();
  config["gpus"][1]["set_power_limit_error"] = "UNKNOWN";
  world.write_config(config);
  const Finished partial = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(partial.exit_code, 3) << partial.out << partial.err;
  EXPECT_NE(partial.out.find("FAILED"), std::string::npos) << partial.out;
  EXPECT_EQ(world.limits_w().at("GPU-safe-aaaa"), 650);
  EXPECT_EQ(world.limits_w().at("GPU-safe-bbbb"), 300);
  EXPECT_EQ(world.journals().size(), 1u);

  world.write_config(two_capped_gpus());
  const Finished restored = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(restored.exit_code, 0) << restored.out << restored.err;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());

  const Finished nothing = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(nothing.exit_code, 0);
  EXPECT_NE(nothing.out.find("nothing to restore"), std::string::npos) << nothing.out;
  EXPECT_EQ(run_wattwise(world.dir(), {"info"}).err.find(warning), std::string::npos);
}

}  // namespace
}  // namespace wattwise::safety
