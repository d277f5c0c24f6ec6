#include "safety/gpu_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "safety/restore.hpp"

namespace wattwise::experiment {
namespace {

using testing::FakeGpu;
using testing::FakeGpuSystem;
using testing::TempDir;

// Runs `body` in a child process that holds the lock of GPU-aaa until the test kills it.
pid_t child_holding_lock(const std::filesystem::path& dir) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(ready[0]);
    try {
      safety::GpuLock lock = safety::GpuLock::acquire(dir, "GPU-aaa");
      char byte = 'L';
      if (::write(ready[1], &byte, 1) != 1) ::_exit(2);
      ::pause();
    } catch (...) {
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char byte = 0;
  if (::read(ready[0], &byte, 1) != 1) return -1;
  ::close(ready[0]);
  return pid;
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

TEST(GpuLock, SecondProcessIsRefusedWithTheGpuAndThePid) {
  TempDir dir;
  const pid_t holder = child_holding_lock(dir.path());
  ASSERT_GT(holder, 0);
  try {
    safety::GpuLock::acquire(dir.path(), "GPU-aaa");
    ADD_FAILURE() << "a second lock was granted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("GPU-aaa"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(holder)), std::string::npos) << e.what();
  }
  EXPECT_EQ(safety::gpu_lock_holder(dir.path(), "GPU-aaa"), holder);
  EXPECT_NO_THROW(safety::GpuLock::acquire(dir.path(), "GPU-bbb"));  // another GPU is free
  kill_and_reap(holder);
  // The kernel released the dead holder's lock.
  EXPECT_FALSE(safety::gpu_lock_holder(dir.path(), "GPU-aaa"));
  EXPECT_NO_THROW(safety::GpuLock::acquire(dir.path(), "GPU-aaa"));
}

safety::Journal journal_of(long pid) {
  safety::Journal journal = safety::new_journal();
  journal.pid = pid;
  journal.gpus.push_back({"GPU-aaa", 0, "H100", 250.0, false, false});
  return journal;
}

TEST(StaleJournal, JournalOfADeadProcessIsStale) {
  TempDir dir;
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  safety::write_journal(safety::journal_path_for(dir.path(), dead), journal_of(dead));
  auto warning = safety::check_stale_journal(dir.path());
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("stale settings journal from PID " + std::to_string(dead)), std::string::npos)
      << *warning;
  EXPECT_NE(warning->find("wattwise restore"), std::string::npos);
}

TEST(StaleJournal, JournalOfALiveProcessHoldingTheLockIsNotStale) {
  TempDir dir;
  const pid_t holder = child_holding_lock(dir.path());
  ASSERT_GT(holder, 0);
  safety::write_journal(safety::journal_path_for(dir.path(), holder), journal_of(holder));
  EXPECT_FALSE(safety::check_stale_journal(dir.path()));
  kill_and_reap(holder);
  EXPECT_TRUE(safety::check_stale_journal(dir.path()));
}

TEST(StaleJournal, AliveButNotHoldingTheLockIsStale) {
  TempDir dir;
  safety::write_journal(safety::journal_path_for(dir.path(), ::getppid()),
                        journal_of(::getppid()));  // a reused PID
  EXPECT_TRUE(safety::check_stale_journal(dir.path()));
}

TEST(Restore, AppliesAJournalFileByUuidAndRemovesIt) {
  TempDir dir;
  FakeGpuSystem system;
  system.add(std::make_unique<FakeGpu>(0, "GPU-bbb", 300));
  system.add(std::make_unique<FakeGpu>(1, "GPU-aaa", 150));  // indices moved since the journal was written
  const auto path = safety::journal_path_for(dir.path(), 99999999);
  safety::write_journal(path, journal_of(99999999));
  safety::RestoreReport report = safety::restore_from_journal_file(system, path);
  ASSERT_TRUE(report.all_ok()) << report.summary();
  EXPECT_EQ(system.fake(1).limit_w(), 250);
  EXPECT_EQ(system.fake(0).limit_w(), 300);
  EXPECT_EQ(report.gpus.at(0).index, 1u);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(Restore, MissingGpuIsReportedAndTheJournalKept) {
  TempDir dir;
  FakeGpuSystem system;
  system.add(std::make_unique<FakeGpu>(0, "GPU-bbb", 300));
  safety::Journal journal = journal_of(99999999);
  journal.gpus.push_back({"GPU-bbb", 1, "H100", 200.0, false, false});
  const auto path = safety::journal_path_for(dir.path(), 99999999);
  safety::write_journal(path, journal);
  safety::RestoreReport report = safety::restore_from_journal_file(system, path);
  EXPECT_FALSE(report.all_ok());
  EXPECT_FALSE(report.gpus.at(0).ok);
  EXPECT_NE(report.gpus.at(0).message.find("not found"), std::string::npos);
  EXPECT_TRUE(report.gpus.at(1).ok);  // the GPU after the missing one was still restored
  EXPECT_EQ(system.fake(0).limit_w(), 200);
  EXPECT_TRUE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace wattwise::experiment
