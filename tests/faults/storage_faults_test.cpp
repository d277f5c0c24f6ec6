// Storage faults under a sweep: a full disk (a small tmpfs, where this machine lets the test mount one)
// and a database held by another SQLite connection (a reader or a writer) for a few seconds.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/mount.h>

#include <fstream>
#include <iostream>
#include <random>
#include <thread>

#include "invariants.hpp"

namespace wattwise::faults {
namespace {

std::vector<std::string> sweep_args(const FaultWorld& world, const std::filesystem::path& db,
                                    const std::filesystem::path& traces, const std::string& limits, int ms) {
  std::vector<std::string> args = {"sweep",     "--power-limit", limits,          "--db",
                                   db.string(), "--trace-dir",   traces.string(), "--"};
  const auto job = world.job("normal", ms);
  args.insert(args.end(), job.begin(), job.end());
  return args;
}

void report(const std::string& name, std::uint64_t seed, const Violations& v, const Finished& f) {
  std::cout << name << std::endl;
  record(v);
  if (!v.empty()) ADD_FAILURE() << describe(name, seed, v, f);
}

// A tmpfs of `size` mounted at `dir` for the test's lifetime; mounted() false where the machine refuses
// (not root, no CAP_SYS_ADMIN, a container without the mount syscall).
class SmallTmpfs {
 public:
  SmallTmpfs(const std::filesystem::path& dir, const std::string& size) : dir_(dir) {
    std::filesystem::create_directories(dir);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }

 private:
  std::filesystem::path dir_;
  bool mounted_ = false;
};

// Fills the file system at `dir` but for about `leave_bytes`.
void fill_leaving(const std::filesystem::path& dir, std::size_t leave_bytes) {
  const auto space = std::filesystem::space(dir);
  if (space.available <= leave_bytes) return;
  std::ofstream filler(dir / "filler", std::ios::binary);
  const std::string block(4096, 'x');
  for (std::size_t written = 0; written + leave_bytes + block.size() <= space.available;
       written += block.size())
    filler.write(block.data(), static_cast<std::streamsize>(block.size()));
}

// The disk fills at a random point of a sweep (how much is left is drawn from the seed): wattwise stops
// with a clear environment error or completes; the GPUs are restored, each stored run has its whole trace.
TEST(FullDisk, SweepStopsClearlyAndKeepsEveryStoredRunWhole) {
  for (int trial = 0, trials = trial_count(6); trial < trials; ++trial) {
    const std::uint64_t seed = trial_seed(7500, trial);
    std::mt19937_64 random(seed);
    FaultWorld world;
    SmallTmpfs disk(world.dir() / "disk", "512k");
    if (!disk.mounted()) {
      GTEST_SKIP() << "full disk: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN); the case runs "
                      "where the machine allows, see docs/safety.md";
    }
    const std::size_t leave = 8 * 1024 + random() % (200 * 1024);
    fill_leaving(world.dir() / "disk", leave);
    const auto captured = world.gpu_settings();
    const auto db = world.dir() / "disk" / "sweep.db";
    const std::string name =
        fmt::format("sweep, disk full with {} KiB left, trial {} seed {}", leave / 1024, trial, seed);
    const Finished f = run_wattwise(
        world, sweep_args(world, db, world.dir() / "disk" / "traces", "300,350,400,450,500", 250));
    Violations v = clear_outcome(f, {0, 3});
    for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
    for (auto&& x : no_orphans(world)) v.push_back(x);
    // The user frees space before looking (the message says so): a reader of a WAL database needs room
    // for its shared-memory file, so a full disk would hide even a whole database from the check.
    std::filesystem::remove(world.dir() / "disk" / "filler");
    // A run whose job finished may be lost only to the disk itself: wattwise must then say so (exit 3).
    for (auto&& x : runs_stored_once(world, db, {true, 2, f.exit_code == 3 ? 1 : 0})) v.push_back(x);
    for (auto&& x : no_journal_left(world, f)) v.push_back(x);
    report(name, seed, v, f);
  }
}

// Another connection holds the database for a few seconds, as `sqlite3 sweep.db` or a report would: the
// sweep waits for it and loses nothing.
class LockedDatabase : public ::testing::TestWithParam<const char*> {};

TEST_P(LockedDatabase, SweepWaitsAndLosesNoRun) {
  const std::string lock_sql = GetParam();
  FaultWorld world;
  const auto captured = world.gpu_settings();
  const auto db = world.dir() / "sweep.db";
  Wattwise wattwise(world.dir(), sweep_args(world, db, world.dir() / "traces", "300,400,500,600", 300));
  // Once the first job runs (the database is made before it), hold the database for 2 s: the first run
  // ends while it is held.
  for (int i = 0; i < 2000 && !std::filesystem::exists(world.job_dir() / "pids"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &other), SQLITE_OK);
  sqlite3_busy_timeout(other, 5000);
  char* error = nullptr;
  const int held = sqlite3_exec(other, lock_sql.c_str(), nullptr, nullptr, &error);
  const std::string held_error = error ? error : "";
  sqlite3_free(error);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  const Finished f = wattwise.wait();
  Violations v;
  if (held != SQLITE_OK) v.push_back("the test could not take the lock: " + held_error);
  for (auto&& x : clear_outcome(f, {0})) v.push_back(x);
  for (auto&& x : gpus_at_captured(world, captured)) v.push_back(x);
  for (auto&& x : no_orphans(world)) v.push_back(x);
  for (auto&& x : runs_stored_once(world, db, {true, 2, 0})) v.push_back(x);
  if (v.empty())
    for (auto&& x : plan_complete(db, 4)) v.push_back(x);
  report("sweep, database held by another connection: " + lock_sql, 0, v, f);
}

INSTANTIATE_TEST_SUITE_P(Faults, LockedDatabase,
                         ::testing::Values("BEGIN IMMEDIATE", "BEGIN; SELECT count(*) FROM runs"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return info.index == 0 ? std::string("Writer") : std::string("Reader");
                         });

}  // namespace
}  // namespace wattwise::faults
