// The sweep's storage end to end: the real wattwise binary on the fake NVML (two GPUs capped at 650 W).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "safety_support.hpp"
#include "store/results_store.hpp"

namespace wattwise::safety {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs argv[0] (found in PATH) to the end, its output to files in `dir`.
Finished run_program(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const auto out = dir / "program.out";
  const auto err = dir / "program.err";
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text(out), read_text(err)};
}

// Whether this machine lets an unprivileged user mount a tmpfs in a new user and mount namespace.
bool can_mount_tmpfs(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir / "probe");
  return run_program(dir, {"unshare", "-Urm", "sh", "-c", "mount -t tmpfs -o size=8k none \"$0\"",
                           (dir / "probe").string()})
             .exit_code == 0;
}

std::set<std::size_t> stored_indices(const std::filesystem::path& db) {
  return store::ResultsStore::open_read_only(db).completed_plan_indices();
}

// plan_index -> how many GPU traces the database holds for that run.
std::map<std::size_t, int> trace_counts(const std::filesystem::path& db) {
  std::map<std::size_t, int> counts;
  sqlite3* raw = nullptr;
  sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* query = nullptr;
  sqlite3_prepare_v2(raw,
                     "SELECT plan_index, count(*) FROM traces JOIN runs ON runs.id = traces.run_id "
                     "GROUP BY plan_index",
                     -1, &query, nullptr);
  while (sqlite3_step(query) == SQLITE_ROW)
    counts[static_cast<std::size_t>(sqlite3_column_int64(query, 0))] = sqlite3_column_int(query, 1);
  sqlite3_finalize(query);
  sqlite3_close(raw);
  return counts;
}

// A full disk while the second run's trace is written: the trace directory is a 24 KiB tmpfs; the first
// run's job is short (its trace fits), the second's long (it does not: 5 s, since the sampler keeps only
// the ends of runs of equal instantaneous power and telemetry, a 2 s trace now fits). Before: the trace was
// cut mid-line, the phases file left empty, exit 0, and --resume skipped the run for good.
TEST(FullDisk, WritingATraceStopsWithExit3RestoresAndResumeRunsTheRunAgain) {
  SafetyWorld world;
  if (!can_mount_tmpfs(world.dir())) GTEST_SKIP() << "no unprivileged tmpfs here (unshare -Urm refused)";
  const auto db = world.dir() / "full.db";
  const auto traces = world.dir() / "traces";
  std::filesystem::create_directories(traces);
  const Finished full = run_program(
      world.dir(), {"unshare", "-Urm", "sh", "-c", "mount -t tmpfs -o size=24k none \"$0\" && exec \"$@\"",
                    traces.string(), WATTWISE_BIN, "sweep", "--power-limit", "300", "--param", "t=0.05,5",
                    "--trace-dir", traces.string(), "--db", db.string(), "--", "sleep", "{t}"});
  EXPECT_EQ(full.exit_code, 3) << full.err;
  EXPECT_NE(full.err.find("disk full writing " + traces.string() + "/run-0001"), std::string::npos)
      << full.err;
  EXPECT_NE(full.err.find("continue with --resume"), std::string::npos) << full.err;
  EXPECT_TRUE(world.all_at_w(650));  // restored before the error left
  EXPECT_TRUE(world.journals().empty());
  // The first run is stored with its traces; the second not at all.
  EXPECT_EQ(stored_indices(db), (std::set<std::size_t>{0}));
  EXPECT_EQ(trace_counts(db), (std::map<std::size_t, int>{{0, 2}}));

  // Space freed (another trace directory): --resume alone runs the missing run, with its trace.
  const auto more = world.dir() / "more-traces";
  const Finished resumed =
      run_wattwise(world.dir(), {"sweep", "--resume", "--db", db.string(), "--trace-dir", more.string()});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(stored_indices(db), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(trace_counts(db), (std::map<std::size_t, int>{{0, 2}, {1, 2}}));
  EXPECT_TRUE(std::filesystem::exists(more / "run-0001.csv"));
  EXPECT_FALSE(read_text(more / "run-0001.phases.csv").empty());
  EXPECT_TRUE(world.all_at_w(650));
}

// Before: "internal error" (exit 70) from std::filesystem.
TEST(TraceDir, ThatCannotBeCreatedIsAnEnvironmentErrorBeforeAnyRun) {
  SafetyWorld world;
  std::ofstream(world.dir() / "a-file") << "x";
  const auto db = world.dir() / "nodir.db";
  const Finished f = run_wattwise(
      world.dir(), {"sweep", "--param", "x=1", "--trace-dir", (world.dir() / "a-file" / "t").string(), "--db",
                    db.string(), "--", "touch", (world.dir() / "ran").string()});
  EXPECT_EQ(f.exit_code, 3) << f.err;
  EXPECT_NE(f.err.find("--trace-dir"), std::string::npos) << f.err;
  EXPECT_NE(f.err.find("cannot write there"), std::string::npos) << f.err;
  EXPECT_FALSE(std::filesystem::exists(world.dir() / "ran"));
}

// Before: the second sweep ran its job and then died on a raw "UNIQUE constraint failed".
TEST(SecondWriter, OnTheSameDatabaseIsRefusedBeforeItRunsAnything) {
  SafetyWorld world;
  const auto db = world.dir() / "shared.db";
  WattwiseProcess first(world.dir(), {"sweep", "--param", "x=1", "--db", db.string(), "--", "sleep", "1.5"});
  for (int i = 0; i < 1000 && !std::filesystem::exists(db); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(std::filesystem::exists(db));
  const Finished second = run_wattwise(
      world.dir(), {"sweep", "--resume", "--param", "x=1", "--db", db.string(), "--", "sleep", "1.5"});
  EXPECT_EQ(second.exit_code, 3) << second.err;
  EXPECT_NE(second.err.find("being written by another wattwise (PID " + std::to_string(first.pid()) + ")"),
            std::string::npos)
      << second.err;
  const Finished done = first.wait();
  EXPECT_EQ(done.exit_code, 0) << done.err;
  EXPECT_EQ(store::ResultsStore::open_read_only(db).runs().size(), 1u);
}

// Another program holds the database's write lock for 2 s while runs end (a sqlite3 shell mid-edit). Before:
// "database is locked" at once, the sweep dead and the run just measured lost.
TEST(LockedDatabase, AWriteLockHeldForSecondsIsWaitedForAndNoRunIsLost) {
  SafetyWorld world;
  const auto db = world.dir() / "locked.db";
  WattwiseProcess sweep(world.dir(),
                        {"sweep", "--param", "x=1,2,3,4", "--db", db.string(), "--", "sleep", "0.3"});
  const auto a_run_stored = [&] {
    try {
      return !stored_indices(db).empty();
    } catch (const Error&) {
      return false;  // not created yet
    }
  };
  for (int i = 0; i < 2000 && !a_run_stored(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(a_run_stored());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &other), SQLITE_OK);
  sqlite3_busy_timeout(other, 10000);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the fault: held across at least one run's end
  sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  const Finished f = sweep.wait();
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(stored_indices(db), (std::set<std::size_t>{0, 1, 2, 3}));
}

// Before: `--resume --db X` alone was "no command to sweep", and with the knobs again the failed run was
// skipped as done.
TEST(Resume, FromTheDatabaseAloneRunsTheFailedRunsAgain) {
  SafetyWorld world;
  const auto db = world.dir() / "resume.db";
  const auto fixed = world.dir() / "fixed";
  const std::string job = "test -e " + fixed.string() + " || test \"$WATTWISE_PARAM_X\" != 2";
  const Finished first =
      run_wattwise(world.dir(), {"sweep", "--param", "x=1,2,3", "--db", db.string(), "--", "sh", "-c", job});
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("3 runs (1 failed)"), std::string::npos) << first.err;

  std::ofstream(fixed) << "the job is fixed\n";
  const Finished resumed = run_wattwise(world.dir(), {"sweep", "--resume", "--db", db.string()});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("1 failed before and ran again"), std::string::npos) << resumed.err;
  const auto store = store::ResultsStore::open_read_only(db);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 3u);  // each plan index once
  for (const auto& run : runs) EXPECT_TRUE(run.error.empty()) << run.plan_index << ": " << run.error;
  ASSERT_EQ(store.earlier_attempts().size(), 1u);
  EXPECT_EQ(store.earlier_attempts()[0].plan_index, 1u);
}

// Before: the other command was accepted silently and its results mixed with the first one's; and a
// sweep where every run failed exited 0.
TEST(Resume, WithAnotherCommandIsRefusedUnlessMixingIsAllowed) {
  SafetyWorld world;
  const auto db = world.dir() / "mixed.db";
  const Finished failing =
      run_wattwise(world.dir(), {"sweep", "--param", "x=1,2", "--db", db.string(), "--", "false"});
  EXPECT_EQ(failing.exit_code, 1) << failing.err;
  EXPECT_NE(failing.err.find("every run failed (2 of 2)"), std::string::npos) << failing.err;

  const std::vector<std::string> other = {"sweep", "--resume",  "--param", "x=1,2",
                                          "--db",  db.string(), "--",      "true"};
  const Finished refused = run_wattwise(world.dir(), other);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("the command was 'false', now 'true'"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--allow-mixed-results"), std::string::npos) << refused.err;
  EXPECT_TRUE(store::ResultsStore::open_read_only(db).earlier_attempts().empty());  // nothing ran

  auto allowed = other;
  allowed.insert(allowed.begin() + 2, "--allow-mixed-results");
  const Finished mixed = run_wattwise(world.dir(), allowed);
  EXPECT_EQ(mixed.exit_code, 0) << mixed.err;
  const auto store = store::ResultsStore::open_read_only(db);
  EXPECT_EQ(store.succeeded_plan_indices(), (std::set<std::size_t>{0, 1}));
  EXPECT_NE(store.meta("mixed_results").find("\"true\""), std::string::npos) << store.meta("mixed_results");
}

// Issue 22, item 11: before, a failed run said only "exit status 7" and its job's output was gone with the
// terminal. The sweep keeps the end of each run's stdout and stderr; its line for the failed run names
// `wattwise runs DB --failed`, which shows it. The output still reached the terminal as the job wrote it.
TEST(RunOutput, AFailedRunsOutputIsKeptAndListedByRunsFailed) {
  SafetyWorld world;
  const auto db = world.dir() / "output.db";
  const Finished sweep = run_wattwise(
      world.dir(), {"sweep", "--power-limit", "300", "--param", "x=0,7", "--db", db.string(), "--", "sh", "-c",
                    "echo 'loading data x={x}'; echo 'Traceback: CUDA out of memory x={x}' >&2; exit {x}"});
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("loading data x=7"), std::string::npos) << sweep.out;  // passed on, as before
  EXPECT_NE(sweep.err.find("Traceback: CUDA out of memory x=7"), std::string::npos) << sweep.err;
  EXPECT_NE(sweep.err.find("failed (exit status 7): `wattwise runs " + db.string() + " --failed`"),
            std::string::npos)
      << sweep.err;
  EXPECT_TRUE(world.all_at_w(650));

  const Finished all = run_wattwise(world.dir(), {"runs", db.string()});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("x=0"), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("exit status 7"), std::string::npos) << all.out;

  const Finished failed = run_wattwise(world.dir(), {"runs", db.string(), "--failed"});
  EXPECT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_EQ(failed.out.find("x=0 "), std::string::npos) << failed.out;  // the run that succeeded is not listed
  EXPECT_NE(failed.out.find("x=7"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("    Traceback: CUDA out of memory x=7"), std::string::npos) << failed.out;
  EXPECT_NE(failed.out.find("    loading data x=7"), std::string::npos) << failed.out;
}

TEST(RunOutput, RunsRefusesWhatIsNotASweepDatabase) {
  SafetyWorld world;
  std::ofstream(world.dir() / "runs.csv") << "time_s,energy_j\n1,2\n";
  const Finished f = run_wattwise(world.dir(), {"runs", (world.dir() / "runs.csv").string()});
  EXPECT_EQ(f.exit_code, 2) << f.err;
  EXPECT_NE(f.err.find("is not a sweep database"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace wattwise::safety
