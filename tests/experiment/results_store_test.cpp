#include "store/results_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "fake_gpu.hpp"

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
  store.add_run(with_work);
  std::ostringstream csv;
  store.export_runs_csv(csv);
  EXPECT_EQ(csv.str(),
            "power_limit_w,batch,time_s,energy_j,repeat,work,label\n"
            "150,64,10,2000,0,,\"a,b\"\n"
            "150,64,12.5,2500,1,512,\n");
}

}  // namespace
}  // namespace wattwise::experiment
