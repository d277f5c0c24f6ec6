// `wattwise restore` and the watchdog, end to end on the fake NVML: every reachable GPU is restored, a lost
// GPU is named and kept in the journal alone, and one bad journal does not stop the others.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "safety/gpu_lock.hpp"
#include "safety/journal.hpp"
#include "safety_support.hpp"

namespace wattwise::safety {
namespace {

constexpr long kDeadPid = 2147483000;  // no process has this PID: its journals are stale

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool poll(auto&& condition, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void make_state_dir(const SafetyWorld& world) {
  std::filesystem::create_directories(world.state_dir());
  ::chmod(world.state_dir().c_str(), 0700);
}

Journal stale_journal(double aaaa_w) {
  Journal journal = new_journal();
  journal.pid = kDeadPid;
  journal.gpus.push_back({"GPU-safe-aaaa", 0, "NVIDIA H100 80GB HBM3", aaaa_w, false, false});
  return journal;
}

// Failed before: the first journal (unreadable) threw out of the loop, the valid one was never applied.
TEST(RestoreCommand, AnUnreadableJournalDoesNotStopTheOthers) {
  SafetyWorld world;
  make_state_dir(world);
  const auto garbage = journal_path_for(world.state_dir(), 1);  // sorts first
  std::ofstream(garbage) << "{\"tool\": \"wattwise\", \"pid\":";
  const auto valid = journal_path_for(world.state_dir(), kDeadPid);
  write_journal(valid, stale_journal(500));

  const Finished f = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(f.exit_code, 4) << f.out << f.err;
  EXPECT_EQ(world.limits_w().at("GPU-safe-aaaa"), 500) << f.out << f.err;
  EXPECT_FALSE(std::filesystem::exists(valid));
  EXPECT_EQ(read_all(garbage), "{\"tool\": \"wattwise\", \"pid\":");  // kept untouched
  EXPECT_NE(f.out.find("NOT APPLIED"), std::string::npos) << f.out;
  EXPECT_NE(f.err.find(garbage.string()), std::string::npos) << f.err;
}

// Failed before: the format number was never read; a journal of format 2 was applied without a word.
TEST(RestoreCommand, AJournalOfAnUnknownFormatIsRefusedAndKept) {
  SafetyWorld world;
  make_state_dir(world);
  const auto path = journal_path_for(world.state_dir(), kDeadPid);
  nlohmann::json journal = {{"format", 2},
                            {"tool", "wattwise"},
                            {"pid", kDeadPid},
                            {"created_at", "2026-11-23T17:00:00Z"},
                            {"host", "node1"},
                            {"gpus",
                             {{{"uuid", "GPU-safe-aaaa"},
                               {"index", 0},
                               {"name", "H100"},
                               {"power_limit_w", 300},
                               {"reset_sm_clocks", false},
                               {"reset_mem_clocks", false}}}}};
  std::ofstream(path) << journal.dump();
  const Finished f = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(f.exit_code, 4) << f.out << f.err;
  EXPECT_NE(f.out.find("unknown format 2"), std::string::npos) << f.out;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_EQ(read_all(path), journal.dump());
}

// Issue 10 item 1: a GPU lost during a sweep. wattwise is killed; the watchdog, a fresh process that sees
// the GPU lost, restores the healthy GPU and keeps the journal for the lost one only; `wattwise restore`
// exits 3 naming it until it is back. Failed before: the forked watchdog failed on the lost GPU and
// restored neither (or, with the parent's NVML state, did not see the loss at all).
TEST(LostGpu, TheWatchdogRestoresTheHealthyGpuAndRestoreNamesTheLostOne) {
  SafetyWorld world;
  WattwiseProcess wattwise(world.dir(), {"sweep", "--power-limit", "300", "--db",
                                         (world.dir() / "lost.db").string(), "--", "sleep", "3"});
  ASSERT_TRUE(poll([&] { return world.all_at_w(300); })) << "the sweep never set the limit";
  auto lost = two_capped_gpus();
  lost["gpus"][1]["lost_after_s"] = 0;  // from now on, every process that opens NVML finds bbbb lost
  world.write_config(lost);
  wattwise.signal(SIGKILL);
  wattwise.wait();

  const auto locked = [&] {
    return gpu_lock_holder(world.state_dir(), "GPU-safe-aaaa") ||
           gpu_lock_holder(world.state_dir(), "GPU-safe-bbbb");
  };
  ASSERT_TRUE(poll([&] { return !locked() && world.limits_w().at("GPU-safe-aaaa") == 650; }))
      << "the watchdog did not restore the healthy GPU";
  EXPECT_EQ(world.limits_w().at("GPU-safe-bbbb"), 300);
  ASSERT_EQ(world.journals().size(), 1u);
  const Journal kept = read_journal(world.journals().front());
  ASSERT_EQ(kept.gpus.size(), 1u);
  EXPECT_EQ(kept.gpus[0].uuid, "GPU-safe-bbbb");

  const Finished still_lost = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(still_lost.exit_code, 3) << still_lost.out << still_lost.err;
  EXPECT_NE(still_lost.err.find("GPU-safe-bbbb"), std::string::npos) << still_lost.err;
  EXPECT_NE(still_lost.out.find("lost"), std::string::npos) << still_lost.out;
  EXPECT_EQ(world.journals().size(), 1u);

  world.write_config(two_capped_gpus());  // the GPU is back (reset, reboot)
  const Finished back = run_wattwise(world.dir(), {"restore"});
  EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_TRUE(world.all_at_w(650));
  EXPECT_TRUE(world.journals().empty());
}

// Issue 10 item 3. Failed before: the watchdog was a fork of wattwise, with wattwise's command line and its
// NVML library loaded and initialised.
TEST(Watchdog, IsAFreshProcessWithoutWattwisesNvml) {
  SafetyWorld world;
  WattwiseProcess wattwise(world.dir(), {"sweep", "--power-limit", "300", "--db",
                                         (world.dir() / "fresh.db").string(), "--", "sleep", "1"});
  std::optional<pid_t> watchdog;
  ASSERT_TRUE(poll([&] { return (watchdog = wattwise.watchdog_pid()).has_value(); }));
  const auto cmdline = std::filesystem::path("/proc") / std::to_string(*watchdog) / "cmdline";
  const bool execed = poll(
      [&] {
        const std::string args = read_all(cmdline);
        return args.find(std::string("restore\0--watchdog", 18)) != std::string::npos;
      },
      std::chrono::seconds(5));
  EXPECT_TRUE(execed) << "watchdog command line: " << read_all(cmdline);
  const std::string maps = read_all(std::filesystem::path("/proc") / std::to_string(*watchdog) / "maps");
  EXPECT_EQ(maps.find(std::filesystem::path(FAKE_NVML_PATH).filename().string()), std::string::npos)
      << "the watchdog has NVML loaded before it must restore";
  EXPECT_EQ(wattwise.wait().exit_code, 0);
  EXPECT_TRUE(world.wait_restored(650));
}

}  // namespace
}  // namespace wattwise::safety
