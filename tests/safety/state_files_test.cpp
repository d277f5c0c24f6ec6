// The state directory and its lock files against another user who can write there: a planted link or hard
// link is never followed, and a directory others can plant files in is refused with the fix.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "safety/gpu_lock.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"

namespace wattwise::safety {
namespace {

using wattwise::testing::TempDir;

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Failed before: the lock file was opened with O_CREAT and no O_NOFOLLOW, then truncated and written with
// our PID: a link planted under its name made root overwrite the file it pointed at.
TEST(GpuLockFile, APlantedSymlinkIsRefusedAndItsTargetUntouched) {
  TempDir dir;
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_symlink(victim, gpu_lock_path(dir.path(), "GPU-aaa"));
  try {
    GpuLock::acquire(dir.path(), "GPU-aaa");
    FAIL() << "locked through a link";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(victim), "precious\n");
  EXPECT_FALSE(gpu_lock_holder(dir.path(), "GPU-aaa"));
}

TEST(GpuLockFile, APlantedHardLinkIsRefusedAndItsTargetUntouched) {
  TempDir dir;
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "precious\n";
  std::filesystem::create_hard_link(victim, gpu_lock_path(dir.path(), "GPU-aaa"));
  EXPECT_THROW(GpuLock::acquire(dir.path(), "GPU-aaa"), Error);
  EXPECT_EQ(read_all(victim), "precious\n");
}

// Failed before: any directory was used.
TEST(StateDir, WritableByOthersWithoutTheStickyBitIsRefusedWithTheFix) {
  TempDir dir;
  const auto state = dir.path() / "state";
  std::filesystem::create_directory(state);
  ASSERT_EQ(::chmod(state.c_str(), 0777), 0);
  try {
    ensure_state_dir(state);
    FAIL() << "accepted a world-writable state directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("chmod go-w"), std::string::npos) << e.what();
  }
  ASSERT_EQ(::chmod(state.c_str(), 0775), 0);
  EXPECT_THROW(ensure_state_dir(state), Error);
  ASSERT_EQ(::chmod(state.c_str(), 01777), 0);  // like /tmp: others cannot replace our files
  EXPECT_NO_THROW(ensure_state_dir(state));
  ASSERT_EQ(::chmod(state.c_str(), 0755), 0);
  EXPECT_NO_THROW(ensure_state_dir(state));
}

TEST(StateDir, OwnedByAnotherUserIsRefusedWithTheFix) {
  const std::filesystem::path dir = "/some/state";
  try {
    check_state_dir_ownership(dir, 1234, S_IFDIR | 0755, 1000);
    FAIL() << "accepted another user's directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("belongs to user 1234"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("WATTWISE_STATE_DIR"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_state_dir_ownership(dir, 1000, S_IFDIR | 0700, 1000));
  EXPECT_NO_THROW(check_state_dir_ownership(dir, 0, S_IFDIR | 0755, 1000));      // root's: trusted
  EXPECT_THROW(check_state_dir_ownership(dir, 1000, S_IFDIR | 0757, 0), Error);  // root, user's dir
}

TEST(StateDir, ARealDirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  TempDir dir;
  const auto state = dir.path() / "state";
  std::filesystem::create_directory(state);
  ASSERT_EQ(::chown(state.c_str(), 65534, 65534), 0);
  EXPECT_THROW(ensure_state_dir(state), Error);
}

// A pid that was alive a moment ago and is not now (a child that exited and was reaped).
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// Issue 22, item 11: a kill -9 while the journal was rewritten left its temporary file, and no command
// removed it. The next `wattwise restore` or sweep does, and nothing else: not a live writer's temporary,
// not another file, not a link's target.
TEST(JournalTemporaries, HostileOrStaleTemporariesOfDeadWritersAreRemovedAndNothingElse) {
  TempDir dir;
  const long dead = dead_pid();
  const auto stale = dir.path() / fmt::format("settings-journal-{}.json.tmp-0123abcd", dead);
  const auto stale_hidden = dir.path() / fmt::format(".settings-journal-{}.json.tmp-ff00", dead);
  const auto live = dir.path() / fmt::format(".settings-journal-{}.json.tmp-1234", ::getpid());
  const auto journal = dir.path() / fmt::format("settings-journal-{}.json", dead);
  const auto other = dir.path() / "settings-journal-1.json.tmp-notours";
  for (const auto& path : {stale, stale_hidden, live, journal, other}) std::ofstream(path) << "{}";
  const auto victim = dir.path() / "victim";
  std::ofstream(victim) << "keep";
  const auto link = dir.path() / fmt::format("settings-journal-{}.json.tmp-abcd", dead);
  std::filesystem::create_symlink(victim, link);

  auto removed = remove_stale_journal_temporaries(dir.path());
  std::sort(removed.begin(), removed.end());
  std::vector<std::filesystem::path> expected = {stale, stale_hidden};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(removed, expected);
  for (const auto& kept : {live, journal, other, victim}) EXPECT_TRUE(std::filesystem::exists(kept)) << kept;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_all(victim), "keep");
}

}  // namespace
}  // namespace wattwise::safety
