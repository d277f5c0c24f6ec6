#include "safety/watchdog.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "safety/settings_guard.hpp"

namespace wattwise::experiment {
namespace {

using testing::FakeGpu;
using testing::FakeGpuSystem;
using testing::TempDir;

// The GPU's power limit lives in a file, so the watchdog (another process) sees what the parent set.
std::unique_ptr<FakeGpuSystem> file_backed_system(const std::filesystem::path& limit_file) {
  auto system = std::make_unique<FakeGpuSystem>();
  system->add(std::make_unique<FakeGpu>(0, "GPU-aaa", 250, limit_file));
  return system;
}

// What the watchdog gets to reopen the GPUs after wattwise has gone: the same file-backed GPU.
auto reopen(const std::filesystem::path& limit_file) {
  return [limit_file] { return std::unique_ptr<hw::ControllableGpuSystem>(file_backed_system(limit_file)); };
}

double read_limit(const std::filesystem::path& limit_file) {
  return file_backed_system(limit_file)->fake(0).limit_w();
}

bool wait_for(auto&& condition) {
  for (int i = 0; i < 500; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(Watchdog, RestoresFromTheJournalAfterTheParentIsKilled) {
  TempDir dir;
  const auto limit_file = dir.path() / "limit";
  const auto journal = dir.path() / "settings-journal-1.json";
  file_backed_system(limit_file);  // creates the file at 250 W

  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    // Acts as wattwise: capture, start the watchdog, change the limit, then hang until killed.
    ::close(ready[0]);
    auto system = file_backed_system(limit_file);
    safety::SettingsGuard guard(*system, {0}, journal);
    guard.capture();
    safety::Watchdog watchdog(reopen(limit_file), journal);
    guard.apply({.power_limit_w = 150});
    char byte = 'R';
    if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(3);
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  EXPECT_EQ(read_limit(limit_file), 150);
  ASSERT_TRUE(std::filesystem::exists(journal));

  ::kill(parent, SIGKILL);
  int status = 0;
  ::waitpid(parent, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  EXPECT_TRUE(wait_for([&] { return !std::filesystem::exists(journal); })) << "the watchdog did not finish";
  EXPECT_EQ(read_limit(limit_file), 250);
}

TEST(Watchdog, DismissedWatchdogExitsWithoutRestoring) {
  TempDir dir;
  const auto limit_file = dir.path() / "limit";
  const auto journal = dir.path() / "settings-journal-1.json";
  auto system = file_backed_system(limit_file);
  safety::SettingsGuard guard(*system, {0}, journal);
  guard.capture();
  {
    safety::Watchdog watchdog(reopen(limit_file), journal);
    guard.apply({.power_limit_w = 150});
    watchdog.dismiss();
    EXPECT_NE(::kill(watchdog.pid(), 0), 0);  // reaped
  }
  EXPECT_EQ(read_limit(limit_file), 150);
  EXPECT_TRUE(std::filesystem::exists(journal));
  EXPECT_TRUE(guard.restore().all_ok());
  EXPECT_EQ(read_limit(limit_file), 250);
}

TEST(Watchdog, IgnoresSigintAndLivesInItsOwnSession) {
  TempDir dir;
  const auto limit_file = dir.path() / "limit";
  const auto journal = dir.path() / "settings-journal-1.json";
  safety::Watchdog watchdog(reopen(limit_file), journal);
  EXPECT_TRUE(wait_for([&] { return ::getsid(watchdog.pid()) == watchdog.pid(); }));
  ::kill(watchdog.pid(), SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int status = 0;
  EXPECT_EQ(::waitpid(watchdog.pid(), &status, WNOHANG), 0) << "the watchdog died of SIGINT";
  watchdog.dismiss();
}

// The production watchdog is an exec'd binary: when it cannot be started, wattwise must refuse to change
// anything rather than run unguarded.
TEST(Watchdog, ABinaryThatCannotBeExecutedIsAnEnvironmentErrorNotASilentGap) {
  TempDir dir;
  safety::WatchdogLaunch launch;
  launch.exec_binary = dir.path() / "no-such-wattwise";
  try {
    safety::Watchdog watchdog(launch, dir.path() / "settings-journal-1.json");
    FAIL() << "started a watchdog that cannot run";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("no-such-wattwise"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::experiment
