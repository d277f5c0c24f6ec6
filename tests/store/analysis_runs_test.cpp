// The typed read of a sweep database that analyze, report and sweep share (store::read_analysis_runs).
#include "store/analysis_runs.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "analysis/runs_csv.hpp"
#include "core/error.hpp"
#include "plan/knob.hpp"
#include "plan/plan.hpp"

namespace wattwise::store {
namespace {

using wattwise::testing::TempDir;

nlohmann::json plan_json(bool with_reference) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_job_knob("batch=64,256"));
  spec.repeats = 2;
  nlohmann::json json = plan::plan_spec_to_json(spec);
  if (with_reference) json["reference"] = {{"batch", 64}};
  return json;
}

RunRecord stored_run(std::size_t index, const std::string& batch, double time_s, double energy_j) {
  RunRecord run;
  run.plan_index = index;
  run.settings = {{"batch", batch}};
  run.repeat = static_cast<unsigned>(index % 2);
  run.started_at = "2026-01-01T00:00:00Z";
  run.ended_at = "2026-01-01T00:01:00Z";
  run.exit_status = 0;
  run.time_s = time_s;
  run.energy_j = energy_j;
  run.method = "counter";
  return run;
}

std::vector<analysis::RunRecord> parse_csv(const std::string& text) {
  std::istringstream in(text);
  return analysis::parse_runs_csv(in, "runs.csv");
}

struct AnalysisRunsTest : ::testing::Test {
  ResultsStore create(bool with_reference = true) {
    return ResultsStore::create(dir.path() / "sweep.db", {"python train.py", "counter", "node1"},
                                plan_json(with_reference), {{0, "GPU-aaa", "H100", 200.0, 700.0, 700.0}});
  }
  TempDir dir;
};

TEST_F(AnalysisRunsTest, ReturnsWhatWasStoredWithPhases) {
  ResultsStore store = create();
  RunRecord run = stored_run(0, "64", 30.5, 6100.25);
  run.work = 12800;
  run.label = "first";
  run.phases.push_back({std::nullopt, "training", 1, 10.5, 2100.5, 0, "counter"});
  run.phases.push_back({std::nullopt, "epoch", 2, 10.0, 2000.0, 0, "samples"});
  store.add_run(run);

  const AnalysisRuns read = read_analysis_runs(ResultsStore::open_read_only(dir.path() / "sweep.db"));
  ASSERT_EQ(read.runs.size(), 1u);
  const analysis::RunRecord& got = read.runs[0];
  EXPECT_EQ(got.setting, (analysis::Setting{{"batch", 64}}));
  EXPECT_DOUBLE_EQ(got.time_s, 30.5);
  EXPECT_DOUBLE_EQ(got.energy_j, 6100.25);
  EXPECT_EQ(got.work, 12800);
  EXPECT_EQ(got.label, "first");
  ASSERT_EQ(got.phases.size(), 2u);
  EXPECT_EQ(got.phases[0].name, "training");
  EXPECT_DOUBLE_EQ(got.phases[0].time_s, 10.5);
  EXPECT_EQ(got.phases[0].energy_j, 2100.5);
  EXPECT_EQ(got.phases[1].name, "epoch");
  EXPECT_EQ(got.phases[1].count, 2u);
  ASSERT_TRUE(read.default_setting);
  EXPECT_EQ(*read.default_setting, (analysis::Setting{{"batch", 64}}));
}

TEST_F(AnalysisRunsTest, ReadsTheNodeFiguresOfEachRunAndPhase) {
  ResultsStore store = create();
  RunRecord run = stored_run(0, "64", 30, 6000);  // the job's one GPU
  GpuRunEnergy busy, idle;
  busy.gpu_index = 0;
  busy.energy_j = 6000;
  idle.gpu_index = 1;
  idle.energy_j = 2400;
  run.gpus = {busy, idle};
  run.gpu_usage = {{0, "GPU-aaa", true, true, true, {42}}, {1, "GPU-bbb", false, true, false, {}}};
  run.node = {{"package-0", "cpu_package", "powercap", 900.0, 30.0},
              {"package-1", "cpu_package", "powercap", 600.0, 20.0},
              {"core-0", "core", "powercap", 500.0, 16.7},
              {"dram-0", "dram", "powercap", std::nullopt, std::nullopt}};
  run.phases.push_back({std::nullopt, "training", 1, 20, 4000.0, 0, "counter"});
  run.phase_node.push_back({"training", NodeParts{5600.0, 1000.0, std::nullopt, std::nullopt}});
  store.add_run(run);
  store.add_run(stored_run(1, "256", 20, 5000));  // no GPU rows: no node figure

  const AnalysisRuns read = read_analysis_runs(ResultsStore::open_read_only(dir.path() / "sweep.db"));
  ASSERT_EQ(read.runs.size(), 2u);
  const analysis::RunRecord& got = read.runs[0];
  ASSERT_TRUE(got.node);
  EXPECT_EQ(got.node->gpus_j, 8400.0);
  EXPECT_EQ(got.node->cpu_package_j, 1500.0);  // both packages; the core lies inside one
  EXPECT_FALSE(got.node->dram_j);              // a zone without a figure leaves DRAM unknown
  EXPECT_FALSE(got.node->meter_j);
  EXPECT_EQ(got.job_gpus, 1u);
  EXPECT_EQ(got.measured_gpus, 2u);
  ASSERT_EQ(got.phases.size(), 1u);
  ASSERT_TRUE(got.phases[0].node);
  EXPECT_EQ(got.phases[0].node->gpus_j, 5600.0);
  EXPECT_EQ(got.phases[0].node->cpu_package_j, 1000.0);
  EXPECT_FALSE(read.runs[1].node);
  EXPECT_FALSE(read.runs[1].job_gpus);
}

TEST_F(AnalysisRunsTest, LeavesOutFailedRunsAndWarmups) {
  ResultsStore store = create();
  store.add_run(stored_run(0, "64", 30, 6000));
  RunRecord failed = stored_run(1, "64", 5, 900);
  failed.error = "job exited with status 1";
  failed.exit_status = 1;
  store.add_run(failed);
  RunRecord warmup = stored_run(2, "256", 31, 6200);
  warmup.warmup = true;
  store.add_run(warmup);
  store.add_run(stored_run(3, "256", 20, 5000));

  const auto runs = read_analysis_runs(store).runs;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].setting.at("batch"), 64);
  EXPECT_EQ(runs[1].setting.at("batch"), 256);
  EXPECT_DOUBLE_EQ(runs[1].energy_j, 5000);
}

TEST_F(AnalysisRunsTest, AgreesWithTheRunsCsvExport) {
  ResultsStore store = create();
  for (std::size_t i = 0; i < 4; ++i) {
    RunRecord run = stored_run(i, i % 2 ? "256" : "64", 30.0 / 7 + i, 6000.0 / 3 + i);
    run.work = i == 2 ? std::optional<double>() : std::optional<double>(1000.0 * i);
    run.label = "run, \"quoted\"";
    store.add_run(run);
  }
  std::stringstream csv;
  store.export_runs_csv(csv);
  const auto from_csv = analysis::parse_runs_csv(csv, "export");
  const auto typed = read_analysis_runs(store).runs;
  ASSERT_EQ(typed.size(), from_csv.size());
  for (std::size_t i = 0; i < typed.size(); ++i) {
    EXPECT_EQ(typed[i].setting, from_csv[i].setting);
    EXPECT_EQ(typed[i].repeat, from_csv[i].repeat);
    EXPECT_EQ(typed[i].time_s, from_csv[i].time_s);  // bit for bit: the CSV writes the shortest exact form
    EXPECT_EQ(typed[i].energy_j, from_csv[i].energy_j);
    EXPECT_EQ(typed[i].work, from_csv[i].work);
    EXPECT_EQ(typed[i].label, from_csv[i].label);
  }
}

TEST_F(AnalysisRunsTest, CombinesPerGpuPhaseRowsWhenThereIsNoAllGpuRow) {
  ResultsStore store = create(false);
  RunRecord run = stored_run(0, "64", 30, 6000);
  run.phases.push_back({0u, "training", 1, 10, 1000.0, 0, "counter"});
  run.phases.push_back({1u, "training", 1, 12, 1500.0, 0, "counter"});
  run.phases.push_back({0u, "epoch", 1, 9, 800.0, 0, "counter"});
  run.phases.push_back({1u, "epoch", 1, 9, std::nullopt, 0, "counter"});
  store.add_run(run);

  const AnalysisRuns read = read_analysis_runs(store);
  EXPECT_FALSE(read.default_setting);
  ASSERT_EQ(read.runs.size(), 1u);
  const auto& phases = read.runs[0].phases;
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_DOUBLE_EQ(phases[0].time_s, 12);        // the GPUs ran side by side: the longest
  EXPECT_EQ(phases[0].energy_j, 2500.0);         // their energy together
  EXPECT_FALSE(phases[1].energy_j.has_value());  // one GPU without energy: unknown, not partial
}

TEST_F(AnalysisRunsTest, RefusesANonNumericKnobValueNamingIt) {
  ResultsStore store = create(false);
  store.add_run(stored_run(0, "large", 30, 6000));
  try {
    read_analysis_runs(store);
    FAIL() << "a non-numeric knob was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("batch"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'large'"), std::string::npos) << e.what();
  }
}


// Schema 7: a run's and each phase's energy error bar, stored, read back by runs() and by the analysis (a
// phase over GPUs adds the GPUs' bars), exported in the runs CSV; a database before the columns reads as
// unknown and is upgraded on resume.
TEST_F(AnalysisRunsTest, EnergyErrorBarsOfRunsAndPhasesAreStoredAndReadBack) {
  {
    ResultsStore store = create();
    EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
    RunRecord run = stored_run(0, "64", 30, 6000);
    run.energy_uncertainty_j = 12.5;
    run.phases.push_back({std::nullopt, "training", 1, 20, 4000.0, 0, "counter", 7.25});
    run.phases.push_back({0u, "epoch", 2, 10, 1000.0, 0, "counter", 2.0});
    run.phases.push_back({1u, "epoch", 2, 11, 1100.0, 0, "counter", 3.0});
    store.add_run(run);
    store.add_run(stored_run(1, "256", 20, 5000));  // no bar: unknown
  }
  const ResultsStore read_only = ResultsStore::open_read_only(dir.path() / "sweep.db");
  const auto stored = read_only.runs();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].energy_uncertainty_j, 12.5);
  EXPECT_EQ(stored[0].phases.at(0).energy_uncertainty_j, 7.25);
  EXPECT_EQ(stored[0].phases.at(2).energy_uncertainty_j, 3.0);
  EXPECT_FALSE(stored[1].energy_uncertainty_j);

  const AnalysisRuns read = read_analysis_runs(read_only);
  ASSERT_EQ(read.runs.size(), 2u);
  EXPECT_EQ(read.runs[0].energy_uncertainty_j, 12.5);
  ASSERT_EQ(read.runs[0].phases.size(), 2u);
  EXPECT_EQ(read.runs[0].phases[0].energy_uncertainty_j, 7.25);
  EXPECT_EQ(read.runs[0].phases[1].energy_uncertainty_j, 5.0);  // the two GPUs' bars added
  EXPECT_FALSE(read.runs[1].energy_uncertainty_j);

  std::ostringstream csv;
  read_only.export_runs_csv(csv);
  const auto from_csv = parse_csv(csv.str());
  ASSERT_EQ(from_csv.size(), 2u);
  EXPECT_EQ(from_csv[0].setting, (analysis::Setting{{"batch", 64}}));  // the column is no knob
  EXPECT_EQ(from_csv[0].energy_uncertainty_j, 12.5);
  EXPECT_FALSE(from_csv[1].energy_uncertainty_j);
}

TEST_F(AnalysisRunsTest, ADatabaseBeforeTheErrorBarsReadsThemAsUnknownAndGainsThemOnResume) {
  {
    ResultsStore store = create();
    RunRecord run = stored_run(0, "64", 30, 6000);
    run.energy_uncertainty_j = 12.5;
    store.add_run(run);
  }
  // What a schema 6 wattwise wrote: no energy_uncertainty_j columns.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path() / "sweep.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "ALTER TABLE runs DROP COLUMN energy_uncertainty_j; ALTER TABLE run_phases DROP "
                           "COLUMN energy_uncertainty_j; UPDATE meta SET value = '6' WHERE key = "
                           "'schema_version';",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    const ResultsStore old = ResultsStore::open_read_only(dir.path() / "sweep.db");
    ASSERT_EQ(old.runs().size(), 1u);
    EXPECT_FALSE(old.runs()[0].energy_uncertainty_j);
    const AnalysisRuns read = read_analysis_runs(old);
    ASSERT_EQ(read.runs.size(), 1u);
    EXPECT_FALSE(read.runs[0].energy_uncertainty_j);
    std::ostringstream csv;
    old.export_runs_csv(csv);
    EXPECT_FALSE(parse_csv(csv.str()).at(0).energy_uncertainty_j);
  }
  {
    ResultsStore resumed = ResultsStore::open_for_resume(dir.path() / "sweep.db", plan_json(true));
    EXPECT_EQ(resumed.schema_version(), kResultsSchemaVersion);
    RunRecord run = stored_run(1, "64", 31, 6100);
    run.energy_uncertainty_j = 9.0;
    resumed.add_run(run);
  }
  const auto runs = ResultsStore::open_read_only(dir.path() / "sweep.db").runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_FALSE(runs[0].energy_uncertainty_j);  // stored before the column: stays unknown
  EXPECT_EQ(runs[1].energy_uncertainty_j, 9.0);
}

// Schema 8: the end of each run's stdout and stderr, stored with the run (any bytes, NUL included), read
// back one run at a time; a failed run's output goes with it when --resume runs it again.
TEST_F(AnalysisRunsTest, TheEndOfARunsOutputIsStoredAndReadBackAndReplacedWithTheRun) {
  {
    ResultsStore store = create();
    EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
    RunRecord failed = stored_run(0, "64", 3, 600);
    failed.exit_status = 7;
    failed.error = "exit status 7";
    failed.output = {{"stdout", "epoch 1\n", 8, false},
                     {"stderr", std::string("...\0CUDA out of memory\n", 23), 70000, true}};
    store.add_run(failed);
    store.add_run(stored_run(1, "256", 20, 5000));
  }
  {
    const ResultsStore read = ResultsStore::open_read_only(dir.path() / "sweep.db");
    const auto output = read.run_output(0);
    ASSERT_EQ(output.size(), 2u);
    EXPECT_EQ(output[0].stream, "stdout");
    EXPECT_EQ(output[0].tail, "epoch 1\n");
    EXPECT_FALSE(output[0].truncated);
    EXPECT_EQ(output[1].stream, "stderr");
    EXPECT_EQ(output[1].tail, std::string("...\0CUDA out of memory\n", 23));
    EXPECT_EQ(output[1].bytes, 70000u);
    EXPECT_TRUE(output[1].truncated);
    EXPECT_TRUE(read.run_output(1).empty());  // none kept (as a simulated run)
  }
  {
    ResultsStore resumed = ResultsStore::open_for_resume(dir.path() / "sweep.db", plan_json(true));
    RunRecord again = stored_run(0, "64", 30, 6000);
    again.output = {{"stdout", "done\n", 5, false}, {"stderr", "", 0, false}};
    resumed.add_run(again);
  }
  const auto output = ResultsStore::open_read_only(dir.path() / "sweep.db").run_output(0);
  ASSERT_EQ(output.size(), 2u);
  EXPECT_EQ(output[0].tail, "done\n");
  EXPECT_EQ(output[1].bytes, 0u);
}

TEST_F(AnalysisRunsTest, ADatabaseBeforeRunOutputReadsNoneAndGainsTheTableOnResume) {
  { create().add_run(stored_run(0, "64", 30, 6000)); }
  {  // what a schema 7 wattwise wrote
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path() / "sweep.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE run_output; UPDATE meta SET value = '7' WHERE key = 'schema_version';",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    const ResultsStore old = ResultsStore::open_read_only(dir.path() / "sweep.db");
    EXPECT_EQ(old.schema_version(), 7);
    EXPECT_TRUE(old.run_output(0).empty());
  }
  {
    ResultsStore resumed = ResultsStore::open_for_resume(dir.path() / "sweep.db", plan_json(true));
    EXPECT_EQ(resumed.schema_version(), kResultsSchemaVersion);
    RunRecord run = stored_run(1, "64", 31, 6100);
    run.output = {{"stderr", "warning\n", 8, false}};
    resumed.add_run(run);
  }
  const auto output = ResultsStore::open_read_only(dir.path() / "sweep.db").run_output(1);
  ASSERT_EQ(output.size(), 1u);
  EXPECT_EQ(output[0].tail, "warning\n");
}

}  // namespace
}  // namespace wattwise::store
