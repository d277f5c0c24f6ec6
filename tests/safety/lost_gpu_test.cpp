// Restore when one GPU is lost: the real NVML path (the fake driver) opens every GPU it can, and restore puts
// back every reachable GPU while naming the lost one.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "fake_nvml_env.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"
#include "safety/settings_guard.hpp"

namespace wattwise::safety {
namespace {

using wattwise::testing::FakeGpu;
using wattwise::testing::FakeGpuSystem;
using wattwise::testing::TempDir;
using hw::testing::FakeNvmlEnv;

nlohmann::json second_gpu_lost() {
  nlohmann::json config = hw::testing::two_gpu_config();
  config["gpus"][1]["lost_after_s"] = 0;  // lost from the start
  return config;
}

// Failed before: one GPU whose identity could not be read made the whole GPU system fail to open, so the
// watchdog and `wattwise restore` restored neither GPU.
TEST(LostGpu, TheGpuSystemStillOpensAndKeepsEveryGpuInItsPlace) {
  FakeNvmlEnv env(second_gpu_lost());
  auto system = FakeNvmlEnv::system();
  ASSERT_EQ(system->count(), 2u);
  EXPECT_EQ(system->gpu(0).identity().uuid, "GPU-aaaa");
  EXPECT_TRUE(system->gpu(0).power_limits().has_value());
  EXPECT_EQ(system->gpu(1).identity().index, 1u);
  EXPECT_EQ(system->gpu(1).identity().uuid, "");
  ASSERT_EQ(system->unavailable().size(), 1u);
  EXPECT_NE(system->unavailable()[0].reason.find("GPU is lost"), std::string::npos)
      << system->unavailable()[0].reason;
  try {
    system->gpu(1).set_power_limit_w(300);
    FAIL() << "a lost GPU took a setting";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("GPU is lost"), std::string::npos) << e.what();
  }
}

TEST(LostGpu, RestoreRestoresTheHealthyGpuAndNamesTheLostOne) {
  FakeNvmlEnv env(second_gpu_lost());
  TempDir dir;
  Journal journal = new_journal();
  journal.pid = 99999999;
  journal.gpus.push_back({"GPU-aaaa", 0, "H100", 450.0, false, false});
  journal.gpus.push_back({"GPU-bbbb", 1, "H100", 550.0, false, false});
  const auto path = journal_path_for(dir.path(), journal.pid);
  write_journal(path, journal);

  auto system = FakeNvmlEnv::system();
  const RestoreReport report = restore_from_journal_file(*system, path);
  EXPECT_TRUE(report.gpus.at(0).ok) << report.summary();
  EXPECT_EQ(system->gpu(0).power_limits()->current_w, 450);
  EXPECT_FALSE(report.gpus.at(1).ok);
  EXPECT_NE(report.gpus.at(1).message.find("GPU-bbbb"), std::string::npos) << report.summary();
  EXPECT_NE(report.gpus.at(1).message.find("lost"), std::string::npos) << report.summary();
  const Journal kept = read_journal(path);
  ASSERT_EQ(kept.gpus.size(), 1u);
  EXPECT_EQ(kept.gpus[0].uuid, "GPU-bbbb");
}

// The guard's own restore when a GPU is lost during the sweep: the healthy GPU is put back, the lost one is
// named, and the journal is kept for it alone. Failed before: the whole journal was kept, so a later
// `wattwise restore` would set the healthy GPU back to its old limit over anything set since.
TEST(LostGpu, TheGuardRestoresTheHealthyGpuAndKeepsTheJournalForTheLostOne) {
  nlohmann::json config = hw::testing::two_gpu_config();
  config["gpus"][1]["lost_after_s"] = 1.0;
  FakeNvmlEnv env(config);
  TempDir dir;
  auto system = FakeNvmlEnv::system();
  const auto path = journal_path_for(dir.path(), 4242);
  SettingsGuard guard(*system, {0, 1}, path);
  guard.apply({.power_limit_w = 300});
  EXPECT_EQ(system->gpu(1).power_limits()->current_w, 300);
  // Wait (polling, up to 10 s) until the fake driver says GPU 1 is lost.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool lost = false;
  while (!lost && std::chrono::steady_clock::now() < deadline) {
    try {
      system->gpu(1).energy_mj();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } catch (const Error&) {
      lost = true;
    }
  }
  ASSERT_TRUE(lost);
  const RestoreReport report = guard.restore();
  EXPECT_TRUE(report.gpus.at(0).ok) << report.summary();
  EXPECT_EQ(system->gpu(0).power_limits()->current_w, 700);
  EXPECT_FALSE(report.gpus.at(1).ok);
  EXPECT_NE(report.gpus.at(1).message.find("GPU is lost"), std::string::npos) << report.summary();
  const Journal kept = read_journal(path);
  ASSERT_EQ(kept.gpus.size(), 1u);
  EXPECT_EQ(kept.gpus[0].uuid, "GPU-bbbb");
  EXPECT_EQ(kept.gpus[0].power_limit_w, 600);
}

// Item 14: the refusal tells root what is really missing, and everybody else to run as root.
TEST(PermissionRefusal, RootIsNotToldToUseSudo) {
  FakeGpuSystem system;
  FakeGpu& gpu = system.add(std::make_unique<FakeGpu>(0, "GPU-aaa", 300));
  const std::string driver =
      "GPU 0: nvmlDeviceSetPowerManagementLimit failed: Insufficient Permissions: changing power limits "
      "needs root: run wattwise as root, e.g. with sudo";
  const std::string as_root = refused_change(gpu, "power limit", driver, true).what();
  EXPECT_EQ(as_root.find("sudo"), std::string::npos) << as_root;
  EXPECT_EQ(as_root.find("run wattwise as root"), std::string::npos) << as_root;
  EXPECT_NE(as_root.find("Insufficient Permissions"), std::string::npos) << as_root;
  EXPECT_NE(as_root.find("container"), std::string::npos) << as_root;
  EXPECT_NE(as_root.find("administrator"), std::string::npos) << as_root;
  const std::string as_user = refused_change(gpu, "power limit", driver, false).what();
  EXPECT_NE(as_user.find("run wattwise as root"), std::string::npos) << as_user;
  // A failure that is not a refusal keeps its own advice.
  const std::string lost =
      refused_change(gpu, "power limit", "GPU 0: x failed: GPU is lost: check Xid", true).what();
  EXPECT_EQ(lost.find("container"), std::string::npos) << lost;
  EXPECT_NE(lost.find("check Xid"), std::string::npos) << lost;
}

}  // namespace
}  // namespace wattwise::safety
