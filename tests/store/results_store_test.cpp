#include "store/results_store.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

using testing::TempDir;

plan::PlanSpec spec() {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("150,300"));
  spec.knobs.push_back(plan::parse_job_knob("batch=64"));
  spec.repeats = 2;
  spec.warmup_runs = 1;
  return spec;
}

store::RunRecord record_of(const plan::PlannedRun& planned, double time_s) {
  store::RunRecord run;
  run.plan_index = planned.index;
  run.settings = planned.settings;
  run.repeat = planned.repeat;
  run.warmup = planned.warmup;
  run.started_at = "2025-01-01T00:00:00Z";
  run.ended_at = "2025-01-01T00:01:00Z";
  run.exit_status = 0;
  run.time_s = time_s;
  run.energy_j = time_s * 200;
  run.method = "counter";
  run.gpus.push_back({0, time_s * 200, 200.0, 250.0, "counter", 150.0, std::nullopt, std::nullopt});
  run.phases.push_back({0, "epoch", 3, time_s, std::nullopt, 42, "samples"});
  return run;
}

struct StoreTest : ::testing::Test {
  std::filesystem::path db() const { return dir.path() / "sweep.db"; }
  store::ResultsStore create() {
    return store::ResultsStore::create(db(), {"python train.py", "counter", "node1"},
                                       plan::plan_spec_to_json(spec()),
                                       {{0, "GPU-aaa", "H100", 200.0, 700.0, 700.0}});
  }
  TempDir dir;
};

TEST_F(StoreTest, EachRunIsCommittedAtOnceAndVisibleToAnotherConnection) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store.add_run(record_of(plan.runs[0], 10));
  // Another connection (as after a crash) sees the run without the writer closing anything.
  store::ResultsStore reader = store::ResultsStore::open_read_only(db());
  EXPECT_EQ(reader.completed_plan_indices(), (std::set<std::size_t>{0}));
}

TEST_F(StoreTest, CommittedRunsSurviveTheWriterBeingKilled) {
  const pid_t child = ::fork();
  if (child == 0) {
    store::ResultsStore store = create();
    plan::Plan plan = plan::make_plan(spec());
    store.add_run(record_of(plan.runs[0], 10));
    store.add_run(record_of(plan.runs[1], 11));
    ::_exit(0);  // no destructor: the store is never closed
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0, 1}));
}

TEST_F(StoreTest, RunsRoundTrip) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store::RunRecord written = record_of(plan.runs[2], 12.5);
  written.work = 1024;
  written.label = "a, \"quoted\" label";
  store.add_run(written);
  auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].plan_index, 2u);
  EXPECT_EQ(runs[0].settings, written.settings);
  EXPECT_EQ(runs[0].time_s, 12.5);
  EXPECT_EQ(runs[0].work, 1024);
  EXPECT_EQ(runs[0].gpus.at(0).enforced_power_limit_w, 150.0);
  EXPECT_FALSE(runs[0].gpus.at(0).sm_clock_mhz);
  EXPECT_EQ(runs[0].phases.at(0).name, "epoch");
  EXPECT_FALSE(runs[0].phases.at(0).energy_j);  // absent stays absent, never 0
  EXPECT_EQ(store.meta("host"), "node1");
  EXPECT_EQ(store.meta("schema_version"), std::to_string(store::kResultsSchemaVersion));
  EXPECT_EQ(store.gpus().at(0).uuid, "GPU-aaa");
}

TEST_F(StoreTest, SamePlanIndexTwiceIsRefusedAndNothingHalfWritten) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store.add_run(record_of(plan.runs[1], 10));
  EXPECT_THROW(store.add_run(record_of(plan.runs[1], 99)), Error);
  auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].time_s, 10);
  EXPECT_EQ(runs[0].gpus.size(), 1u);  // the failed insert's rows were rolled back
}

TEST_F(StoreTest, ResumeGivesCompletedIndices) {
  {
    store::ResultsStore store = create();
    plan::Plan plan = plan::make_plan(spec());
    store.add_run(record_of(plan.runs[0], 10));
    store.add_run(record_of(plan.runs[3], 10));
  }
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0, 3}));
}

TEST_F(StoreTest, ResumeWithADifferentPlanIsRefusedNamingTheDifference) {
  create();
  plan::PlanSpec other = spec();
  other.seed = 99;
  try {
    store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(other));
    FAIL() << "resumed a different plan";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("seed"), std::string::npos) << e.what();
  }
}

// A creation killed half-way (SIGKILL, power loss) left its file under the temporary name only: the
// database's own name never holds a file without tables (found by the fault suite under ASan: a SIGKILL
// 19 ms into a sweep left sweep.db without its tables), and the next creation starts clean.
TEST_F(StoreTest, AKilledCreationLeavesNoDatabaseAndTheNextOneStartsClean) {
  std::ofstream(dir.path() / "sweep.db.new") << "half a database";
  store::ResultsStore store = create();
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "sweep.db.new"));
  plan::Plan plan = plan::make_plan(spec());
  store.add_run(record_of(plan.runs[0], 10));
  EXPECT_EQ(store::ResultsStore::open_read_only(db()).completed_plan_indices(), (std::set<std::size_t>{0}));
}

TEST_F(StoreTest, CreatingOverAnExistingFileIsRefused) {
  create();
  EXPECT_THROW(create(), Error);
}

std::string contents(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void expect_not_wattwise(const std::filesystem::path& path) {
  const std::string before = contents(path);
  try {
    store::ResultsStore::open_for_resume(path, plan::plan_spec_to_json(spec()));
    ADD_FAILURE() << "opened a foreign file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("is not a wattwise results database"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(contents(path), before);  // untouched
  EXPECT_FALSE(std::filesystem::exists(path.string() + "-journal"));
}

TEST_F(StoreTest, CorruptOrForeignFilesAreDataErrorsAndLeftUntouched) {
  std::ofstream(dir.path() / "text.db") << "time_s,energy_j\n1,2\n";
  expect_not_wattwise(dir.path() / "text.db");

  // An SQLite header followed by garbage.
  std::ofstream(dir.path() / "corrupt.db", std::ios::binary)
      << std::string("SQLite format 3\0", 16) << std::string(4096, '\x7f');
  expect_not_wattwise(dir.path() / "corrupt.db");

  // A valid SQLite database of some other program.
  {
    sqlite3* other = nullptr;
    sqlite3_open((dir.path() / "other.db").c_str(), &other);
    sqlite3_exec(other, "CREATE TABLE t (x); INSERT INTO t VALUES (1);", nullptr, nullptr, nullptr);
    sqlite3_close(other);
  }
  expect_not_wattwise(dir.path() / "other.db");
}

TEST_F(StoreTest, ExportsTheAnalysisCsvContractWithoutWarmupsOrFailedRuns) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store.add_run(record_of(plan.runs[0], 9));  // warm-up
  store::RunRecord measured = record_of(plan.runs[1], 10);
  measured.label = "a,b";
  store.add_run(measured);
  store::RunRecord failed = record_of(plan.runs[2], 11);
  failed.error = "job exited with status 1";
  store.add_run(failed);
  store::RunRecord with_work = record_of(plan.runs[3], 12.5);
  with_work.work = 512;
  with_work.energy_uncertainty_j = 12.25;  // the measurement's error bar
  store.add_run(with_work);
  std::ostringstream csv;
  store.export_runs_csv(csv);
  EXPECT_EQ(csv.str(),
            "power_limit_w,batch,time_s,energy_j,repeat,work,label,energy_uncertainty_j\n"
            "150,64,10,2000,0,,\"a,b\",\n"
            "150,64,12.5,2500,1,512,,12.25\n");
}

// A second connection, as a `sqlite3` shell or a report would hold one.
struct OtherConnection {
  explicit OtherConnection(const std::filesystem::path& path) { sqlite3_open(path.c_str(), &db); }
  ~OtherConnection() { sqlite3_close(db); }
  int exec(const char* sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }
  sqlite3* db = nullptr;
};

bool has_index(const std::filesystem::path& db, const char* name) {
  OtherConnection c(db);
  sqlite3_stmt* query = nullptr;
  sqlite3_prepare_v2(c.db, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", -1, &query,
                     nullptr);
  sqlite3_bind_text(query, 1, name, -1, SQLITE_STATIC);
  const bool found = sqlite3_step(query) == SQLITE_ROW;
  sqlite3_finalize(query);
  return found;
}

TEST_F(StoreTest, RunPhasesAreIndexedByRunInANewDatabaseAndGainTheIndexOnResume) {
  { store::ResultsStore store = create(); }
  EXPECT_TRUE(has_index(db(), "run_phases_run_id"));
  {
    OtherConnection old(db());  // a file made before the index
    ASSERT_EQ(old.exec("DROP INDEX run_phases_run_id"), SQLITE_OK);
  }
  EXPECT_FALSE(has_index(db(), "run_phases_run_id"));
  { store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec())); }
  EXPECT_TRUE(has_index(db(), "run_phases_run_id"));
}

TEST_F(StoreTest, EveryRunReadsBackItsOwnSettingsGpusAndPhases) {
  store::ResultsStore store = create();
  const plan::Plan plan = plan::make_plan(spec());
  // Stored out of plan order, one with no GPU row and an extra phase: each table is read once for all runs.
  store::RunRecord third = record_of(plan.runs[3], 13);
  third.phases.push_back({std::nullopt, "step", 7, 1.5, 20.0, 3, "counter"});
  store::RunRecord first = record_of(plan.runs[1], 11);
  first.gpus.clear();
  store.add_run(third);
  store.add_run(first);
  store.add_run(record_of(plan.runs[2], 12));
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].plan_index, 1u);
  EXPECT_EQ(runs[0].settings, plan.runs[1].settings);
  EXPECT_TRUE(runs[0].gpus.empty());
  EXPECT_EQ(runs[0].phases.size(), 1u);
  EXPECT_EQ(runs[1].plan_index, 2u);
  EXPECT_EQ(runs[1].gpus.at(0).energy_j, 12 * 200);
  EXPECT_EQ(runs[2].plan_index, 3u);
  EXPECT_EQ(runs[2].settings, plan.runs[3].settings);
  ASSERT_EQ(runs[2].phases.size(), 2u);
  EXPECT_EQ(runs[2].phases[1].name, "step");
  EXPECT_EQ(runs[2].phases[1].count, 7u);
  EXPECT_EQ(runs[2].gpus.at(0).energy_j, 13 * 200);
}

TEST_F(StoreTest, AReaderHoldingTheDatabaseDoesNotStopTheCommitOfARun) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  OtherConnection reader(db());
  ASSERT_EQ(reader.exec("BEGIN; SELECT count(*) FROM runs;"), SQLITE_OK);  // a read transaction, held
  store.add_run(record_of(plan.runs[0], 10));  // before: "database is locked" (rollback journal)
  ASSERT_EQ(reader.exec("COMMIT"), SQLITE_OK);
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0}));
  EXPECT_EQ(store::ResultsStore::open_read_only(db()).completed_plan_indices(), (std::set<std::size_t>{0}));
}

TEST_F(StoreTest, AWriteLockHeldByAnotherProgramIsWaitedForAndTheRunIsStored) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  OtherConnection other(db());
  ASSERT_EQ(other.exec("BEGIN IMMEDIATE"), SQLITE_OK);  // e.g. a sqlite3 shell in the middle of an edit
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the fault's length, not a sync point
    other.exec("COMMIT");
  });
  EXPECT_NO_THROW(store.add_run(record_of(plan.runs[0], 10)));  // before: "database is locked" at once
  release.join();
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0}));
}

TEST_F(StoreTest, ALockHeldPastTheBusyTimeoutIsAClearEnvironmentError) {
  store::ResultsStore store = create();
  store.set_busy_timeout(std::chrono::milliseconds(20));
  plan::Plan plan = plan::make_plan(spec());
  OtherConnection other(db());
  ASSERT_EQ(other.exec("BEGIN IMMEDIATE"), SQLITE_OK);
  try {
    store.add_run(record_of(plan.runs[0], 10));
    FAIL() << "stored under another writer's lock";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment) << e.what();
    EXPECT_NE(std::string(e.what()).find("locked by another program"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--resume"), std::string::npos) << e.what();
  }
  other.exec("ROLLBACK");
  EXPECT_TRUE(store.completed_plan_indices().empty());
  store.add_run(record_of(plan.runs[0], 10));  // the store is usable again
}

TEST_F(StoreTest, ASecondWriterIsRefusedAtOnceNamingTheFirst) {
  store::ResultsStore first = create();
  for (int kind = 0; kind < 2; ++kind) {
    try {
      if (kind == 0)
        store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
      else
        create();
      FAIL() << "a second writer was let in";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_EQ(e.kind(), kind == 0 ? ErrorKind::kEnvironment : ErrorKind::kUsage) << what;
      if (kind == 0) {
        EXPECT_NE(what.find("being written by another wattwise"), std::string::npos) << what;
        EXPECT_NE(what.find(std::to_string(::getpid())), std::string::npos) << what;
      }
    }
  }
  // Readers are welcome meanwhile, and the lock goes with the writer.
  EXPECT_NO_THROW(store::ResultsStore::open_read_only(db()));
  first = store::ResultsStore::open_read_only(db());
  EXPECT_NO_THROW(store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec())));
}

TEST_F(StoreTest, ARunIsStoredWithItsTracesInOneTransaction) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store::RunRecord run = record_of(plan.runs[0], 10);
  run.traces = {{0, "time_s,gpu,energy_mj\n0,0,1\n"}, {1, "time_s,gpu,energy_mj\n0,1,2\n"}};
  store.add_run(run);
  OtherConnection reader(db());
  sqlite3_stmt* query = nullptr;
  sqlite3_prepare_v2(reader.db,
                     "SELECT count(*) FROM traces JOIN runs ON runs.id = traces.run_id WHERE plan_index = 0",
                     -1, &query, nullptr);
  ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(query, 0), 2);
  sqlite3_finalize(query);
}

// Runs `body` in a child process; 0 when it returned true. The child ignores SIGXFSZ, so that a write past
// limit_file_size() fails with EFBIG (as a full disk fails one with ENOSPC) instead of killing it.
int in_child(const std::function<bool()>& body) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
    }
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// No file of this process may grow past `bytes` from now on (RLIMIT_FSIZE): the full disk of a test.
bool limit_file_size(std::uint64_t bytes) {
  const rlimit limit{bytes, bytes};
  return ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
}

std::uint64_t largest_file_in(const std::filesystem::path& dir) {
  std::uint64_t largest = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) largest = std::max<std::uint64_t>(largest, e.file_size());
  return largest;
}

TEST_F(StoreTest, AFullDiskDuringTheCommitLeavesTheRunOutAndTheStoredOnesWhole) {
  plan::Plan plan = plan::make_plan(spec());
  const int child = in_child([&] {
    store::ResultsStore store = create();
    store::RunRecord first = record_of(plan.runs[0], 10);
    first.traces = {{0, std::string(2000, 'a')}};
    store.add_run(first);
    if (!limit_file_size(largest_file_in(dir.path()))) return false;
    store::RunRecord big = record_of(plan.runs[1], 11);
    big.traces = {{0, std::string(400000, 'b')}};
    try {
      store.add_run(big);
    } catch (const Error& e) {
      const std::string what = e.what();
      return e.kind() == ErrorKind::kEnvironment && what.find("--resume") != std::string::npos;
    }
    return false;
  });
  ASSERT_EQ(child, 0) << "the failed commit was not a clear environment error";
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0}));  // run 1 absent, run 0 whole
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].gpus.size(), 1u);
  EXPECT_EQ(runs[0].phases.size(), 1u);
}

TEST_F(StoreTest, ResumeRunsFailedRunsAgainAndKeepsTheFailedAttemptForTheRecord) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store.add_run(record_of(plan.runs[0], 10));
  store::RunRecord failed = record_of(plan.runs[1], 3);
  failed.error = "exit status 1";
  failed.exit_status = 1;
  failed.traces = {{0, "old trace"}};
  store.add_run(failed);
  EXPECT_EQ(store.completed_plan_indices(), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(store.succeeded_plan_indices(), (std::set<std::size_t>{0}));  // before: {0, 1}: never re-run

  store::RunRecord again = record_of(plan.runs[1], 11);
  again.traces = {{0, "new trace"}};
  store.add_run(again);
  EXPECT_EQ(store.succeeded_plan_indices(), (std::set<std::size_t>{0, 1}));
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);  // each plan index once
  EXPECT_EQ(runs[1].time_s, 11);
  EXPECT_TRUE(runs[1].error.empty());
  EXPECT_EQ(runs[1].gpus.size(), 1u);
  const auto attempts = store.earlier_attempts();
  ASSERT_EQ(attempts.size(), 1u);
  EXPECT_EQ(attempts[0].plan_index, 1u);
  EXPECT_EQ(attempts[0].error, "exit status 1");
  EXPECT_EQ(attempts[0].exit_status, 1);
  std::ostringstream csv;
  store.export_runs_csv(csv);
  const std::string exported = csv.str();
  EXPECT_EQ(std::count(exported.begin(), exported.end(), '\n'), 2);  // header + run 1 (run 0 is a warm-up)
  // A run that succeeded is never replaced.
  try {
    store.add_run(record_of(plan.runs[1], 99));
    FAIL() << "a successful run was replaced";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already stored"), std::string::npos) << e.what();
  }
}

TEST_F(StoreTest, AVersion1DatabaseIsReadAndUpgradedOnResume) {
  {
    store::ResultsStore store = create();
    store.add_run(record_of(plan::make_plan(spec()).runs[0], 10));
  }
  {
    // What a wattwise of schema version 1 left: no earlier_attempts, no stored argv or options.
    OtherConnection old(db());
    ASSERT_EQ(old.exec("DROP TABLE earlier_attempts; UPDATE meta SET value = '1' WHERE key = "
                       "'schema_version'; DELETE FROM meta WHERE key IN ('command_json', 'sweep_json');"),
              SQLITE_OK);
  }
  {
    const auto reader = store::ResultsStore::open_read_only(db());
    EXPECT_EQ(reader.schema_version(), 1);
    EXPECT_EQ(reader.runs().size(), 1u);
    EXPECT_TRUE(reader.earlier_attempts().empty());
  }
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  EXPECT_EQ(store.schema_version(), store::kResultsSchemaVersion);
  store.check_same_job({"python train.py", "counter", "node1", {"python", "train.py"}, {}},
                       {{0, "GPU-aaa", "H100", {}, {}, {}}}, false);  // compared as text
}

TEST_F(StoreTest, ResumeWithAnotherCommandOrOtherGpusIsRefusedUnlessAllowed) {
  {
    store::ResultsStore store = store::ResultsStore::create(
        db(), {"python train.py --lr 0.1", "counter", "node1", {"python", "train.py", "--lr", "0.1"}, {}},
        plan::plan_spec_to_json(spec()), {{0, "GPU-aaa", "H100", 200.0, 700.0, 700.0}});
  }
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  const std::vector<store::StoredGpu> same_gpus = {{0, "GPU-aaa", "H100", {}, {}, {}}};
  const store::StoreMeta same{"python train.py --lr 0.1", "", "", {"python", "train.py", "--lr", "0.1"}, {}};
  EXPECT_NO_THROW(store.check_same_job(same, same_gpus, false));
  // One argument that differs only in how it was split: the text is the same, the argv is not.
  const store::StoreMeta other{"python train.py --lr 0.1", "", "", {"python", "train.py", "--lr 0.1"}, {}};
  try {
    store.check_same_job(other, same_gpus, false);
    FAIL() << "another command was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("--allow-mixed-results"), std::string::npos) << e.what();
  }
  try {
    store.check_same_job(same, {{0, "GPU-bbb", "H100", {}, {}, {}}}, false);
    FAIL() << "other GPUs were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU-bbb"), std::string::npos) << e.what();
  }
  store.check_same_job(other, same_gpus, true);
  EXPECT_NE(store.meta("mixed_results").find("--lr 0.1"), std::string::npos) << store.meta("mixed_results");
}

}  // namespace
}  // namespace wattwise::experiment

namespace wattwise::experiment {
namespace {

TEST_F(StoreTest, WhereTheJobWasSeenRoundTripsPerGpu) {
  {
    store::ResultsStore store = create();
    auto run = record_of(plan::make_plan(spec()).runs[0], 10);
    run.gpu_usage = {{0, "GPU-aaa", true, true, true, {4242, 4250}},
                     {1, "GPU-bbb", false, false, true, {4243}},
                     {2, "GPU-ccc", false, false, std::nullopt, {}}};
    store.add_run(run);
  }
  const auto reader = store::ResultsStore::open_read_only(db());
  const auto usage = reader.gpu_usage(plan::make_plan(spec()).runs[0].index);
  ASSERT_EQ(usage.size(), 3u);
  EXPECT_TRUE(usage[0].expected && usage[0].measured && usage[0].job_seen == true);
  EXPECT_EQ(usage[0].pids, (std::vector<int>{4242, 4250}));
  EXPECT_FALSE(usage[1].expected);
  EXPECT_EQ(usage[1].job_seen, true);  // the job strayed onto GPU 1
  EXPECT_EQ(usage[1].uuid, "GPU-bbb");
  EXPECT_FALSE(usage[2].job_seen.has_value());
  EXPECT_TRUE(usage[2].pids.empty());
}

TEST_F(StoreTest, AVersion2DatabaseGainsTheGpuUsageTableOnResumeAndKeepsItsRuns) {
  const auto first = plan::make_plan(spec()).runs[0];
  {
    store::ResultsStore store = create();
    store.add_run(record_of(first, 10));
  }
  {
    OtherConnection old(db());  // what a wattwise of schema version 2 left
    ASSERT_EQ(old.exec("DROP TABLE run_gpu_usage; UPDATE meta SET value = '2' WHERE key = 'schema_version';"),
              SQLITE_OK);
  }
  EXPECT_TRUE(store::ResultsStore::open_read_only(db()).gpu_usage(first.index).empty());
  store::ResultsStore store = store::ResultsStore::open_for_resume(db(), plan::plan_spec_to_json(spec()));
  EXPECT_EQ(store.schema_version(), store::kResultsSchemaVersion);
  EXPECT_EQ(store.runs().size(), 1u);
  auto second = record_of(plan::make_plan(spec()).runs[1], 11);
  second.gpu_usage = {{0, "GPU-aaa", true, true, false, {}}};
  store.add_run(second);
  const auto usage = store.gpu_usage(second.plan_index);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].job_seen, false);
}

}  // namespace
}  // namespace wattwise::experiment

namespace wattwise::experiment {
namespace {

TEST_F(StoreTest, AFailedRunRunAgainReplacesItsGpuUsageRows) {
  store::ResultsStore store = create();
  plan::Plan plan = plan::make_plan(spec());
  store::RunRecord failed = record_of(plan.runs[1], 3);
  failed.error = "exit status 1";
  failed.exit_status = 1;
  failed.gpu_usage = {{0, "GPU-aaa", true, true, false, {}}};
  store.add_run(failed);
  store::RunRecord again = record_of(plan.runs[1], 11);
  again.gpu_usage = {{0, "GPU-aaa", true, true, true, {77}}};
  store.add_run(again);  // before: the old run's usage rows collided with the new run's
  const auto usage = store.gpu_usage(plan.runs[1].index);
  ASSERT_EQ(usage.size(), 1u);
  EXPECT_EQ(usage[0].job_seen, true);
  EXPECT_EQ(usage[0].pids, (std::vector<int>{77}));
}

}  // namespace
}  // namespace wattwise::experiment
