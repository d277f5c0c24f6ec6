#include "safety/settings_guard.hpp"

#include <gtest/gtest.h>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

using testing::FakeGpu;
using testing::FakeGpuSystem;
using testing::TempDir;

struct GuardTest : ::testing::Test {
  GuardTest() {
    system.add(std::make_unique<FakeGpu>(0, "GPU-aaa", 250));  // a site cap below the 700 W default
    system.add(std::make_unique<FakeGpu>(1, "GPU-bbb", 300));
  }
  std::filesystem::path journal_path() const { return dir.path() / "settings-journal-1.json"; }
  TempDir dir;
  FakeGpuSystem system;
};

TEST_F(GuardTest, JournalIsWrittenBeforeTheFirstChange) {
  int checked = 0;
  system.fake(0).before_set = [&] {
    ASSERT_TRUE(std::filesystem::exists(journal_path()));
    EXPECT_EQ(safety::read_journal(journal_path()).gpus.at(0).power_limit_w, 250.0);
    ++checked;
  };
  safety::SettingsGuard guard(system, {0, 1}, journal_path());
  guard.apply({.power_limit_w = 150});
  EXPECT_EQ(checked, 1);
  guard.restore();
}

TEST_F(GuardTest, RestoresTheCapturedNonDefaultLimitAndRemovesTheJournal) {
  safety::SettingsGuard guard(system, {0, 1}, journal_path());
  guard.apply({.power_limit_w = 150});
  guard.apply({.power_limit_w = 200});
  EXPECT_EQ(system.fake(0).limit_w(), 200);
  safety::RestoreReport report = guard.restore();
  EXPECT_TRUE(report.all_ok()) << report.summary();
  EXPECT_EQ(system.fake(0).limit_w(), 250);  // the captured value, not the 700 W default
  EXPECT_EQ(system.fake(1).limit_w(), 300);
  EXPECT_FALSE(std::filesystem::exists(journal_path()));
}

TEST_F(GuardTest, RestoreContinuesAfterOneGpuFailsAndKeepsTheJournal) {
  safety::SettingsGuard guard(system, {0, 1}, journal_path());
  guard.apply({.power_limit_w = 150, .sm_clock_mhz = 1410});
  system.fake(0).fail_set_power_limit = true;
  safety::RestoreReport report = guard.restore();
  EXPECT_FALSE(report.all_ok());
  EXPECT_FALSE(report.gpus.at(0).ok);
  EXPECT_FALSE(system.fake(0).sm_locked);  // the clocks of the failing GPU were still reset
  EXPECT_TRUE(report.gpus.at(1).ok);
  EXPECT_EQ(system.fake(1).limit_w(), 300);
  EXPECT_FALSE(system.fake(1).sm_locked);
  EXPECT_TRUE(std::filesystem::exists(journal_path()));
  EXPECT_NE(report.summary().find("journal kept"), std::string::npos);
}

TEST_F(GuardTest, ClocksAreFlaggedInTheJournalBeforeTheyAreLocked) {
  safety::SettingsGuard guard(system, {0}, journal_path());
  system.fake(0).before_set = [&] {
    if (system.fake(0).calls.empty()) return;
    EXPECT_TRUE(safety::read_journal(journal_path()).gpus.at(0).reset_sm_clocks);
  };
  guard.apply({.sm_clock_mhz = 1410});
  EXPECT_TRUE(system.fake(0).sm_locked);
  EXPECT_TRUE(safety::read_journal(journal_path()).gpus.at(0).reset_sm_clocks);
  EXPECT_FALSE(safety::read_journal(journal_path()).gpus.at(0).reset_mem_clocks);
  guard.restore();
  EXPECT_FALSE(system.fake(0).sm_locked);
  // Memory clocks were never locked, so restore did not touch them.
  for (const auto& call : system.fake(0).calls) EXPECT_NE(call, "reset_mem_clocks");
}

TEST_F(GuardTest, DestructorRestoresWhenTheRunnerUnwinds) {
  {
    safety::SettingsGuard guard(system, {0}, journal_path());
    guard.apply({.power_limit_w = 150});
  }
  EXPECT_EQ(system.fake(0).limit_w(), 250);
  EXPECT_FALSE(std::filesystem::exists(journal_path()));
}

TEST_F(GuardTest, UnwritableJournalRefusesBeforeAnyChange) {
  safety::SettingsGuard guard(system, {0}, dir.path() / "missing-dir" / "journal.json");
  EXPECT_THROW(guard.apply({.power_limit_w = 150}), Error);
  EXPECT_TRUE(system.fake(0).calls.empty());
  EXPECT_FALSE(guard.holds_changes());
}

TEST_F(GuardTest, ValidationNamesTheRangeAndTheGpu) {
  try {
    safety::validate_hardware_settings(system, {0, 1}, {{.power_limit_w = 150}, {.power_limit_w = 800}});
    FAIL() << "accepted 800 W";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("100-700 W"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GPU-aaa"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(
      safety::validate_hardware_settings(system, {0, 1}, {{.power_limit_w = 100}, {.power_limit_w = 700}}));
}

TEST_F(GuardTest, ValidationReportsMissingPermissionWithTheDriversNote) {
  system.fake(1).caps.power_limit_set = false;
  system.fake(1).caps.set_permission_note = "needs root or nvidia-smi -acp UNRESTRICTED";
  try {
    safety::validate_hardware_settings(system, {0, 1}, {{.power_limit_w = 150}});
    FAIL() << "accepted without permission";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("needs root"), std::string::npos) << e.what();
  }
  // Without a power-limit knob the permission is not needed.
  EXPECT_NO_THROW(safety::validate_hardware_settings(system, {0, 1}, {{.sm_clock_mhz = 1410}}));
}

}  // namespace
}  // namespace wattwise::experiment
