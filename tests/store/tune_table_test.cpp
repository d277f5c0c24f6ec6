// Schema version 4: the decision trace of `tune --db`, and the upgrade of a version 3 file that only adds
// its tables; version 9: the setting each decision's estimate is of (tune_decisions.estimate_of), NULL in a
// trace stored before it.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "../support/temp_dir.hpp"
#include "store/results_store.hpp"

namespace wattwise::store {
namespace {

namespace fs = std::filesystem;

class TuneTableTest : public ::testing::Test {
 protected:
  static TuneTrace trace() {
    TuneTrace t;
    t.knob = "power-limit";
    t.unit = "W";
    t.metric = "E";
    t.start_value = 700;
    t.settled_value = 325;
    t.profiling_iterations = 120;
    t.iterations = 900;
    // The first decision's estimate is of the start (700 W), the settle's of 330 W, neither the setting held.
    t.decisions = {{"probe", 450, 30, 1.0, 0.99, 1.01, 25, "bracket [200, 700] W", 700},
                   {"settle", 325, 150, 0.81, 0.80, 0.82, 20, "precise", 330}};
    t.changes = {{450, 3.2, 31}, {325, 9.9, 151}};
    t.settings = {{325, 700, 0.1, 0.001, 32.5, 0.6}, {700, 25, 0.1, 0.001, std::nullopt, std::nullopt}};
    return t;
  }

  void sql(const std::string& text) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "t.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  const nlohmann::json plan_ = {{"tune", {{"knob", "power-limit"}}}};
  const wattwise::testing::TempDir temp_{"ww-tune-store"};
  const fs::path& dir_ = temp_.path();
};

TEST_F(TuneTableTest, DecisionTraceIsStoredAndReadBack) {
  {
    auto store = ResultsStore::create(dir_ / "t.db", {}, plan_, {});
    EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
    EXPECT_FALSE(store.tune_trace());  // none yet
    store.add_tune_trace(trace());
  }
  const auto read = ResultsStore::open_read_only(dir_ / "t.db").tune_trace();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->knob, "power-limit");
  EXPECT_EQ(read->settled_value, 325);
  EXPECT_EQ(read->profiling_iterations, 120u);
  ASSERT_EQ(read->decisions.size(), 2u);
  EXPECT_EQ(read->decisions[0].kind, "probe");
  EXPECT_EQ(read->decisions[1].value, 325);
  EXPECT_EQ(read->decisions[1].reason, "precise");
  EXPECT_EQ(read->decisions[0].estimate_of, 700);
  EXPECT_EQ(read->decisions[1].estimate_of, 330);
  ASSERT_EQ(read->changes.size(), 2u);
  EXPECT_DOUBLE_EQ(read->changes[1].at_s, 9.9);
  ASSERT_EQ(read->settings.size(), 2u);
  EXPECT_EQ(read->settings[0].value, 325);
  EXPECT_FALSE(read->settings[1].energy_j_mean);  // absent stays NULL, never 0
}

TEST_F(TuneTableTest, VersionThreeFileHasNoTraceAndIsUpgradedOnResume) {
  { ResultsStore::create(dir_ / "t.db", {}, plan_, {}); }
  sql("DROP TABLE tune; DROP TABLE tune_decisions; DROP TABLE tune_changes; DROP TABLE tune_settings; "
      "UPDATE meta SET value = '3' WHERE key = 'schema_version';");
  {
    const auto old = ResultsStore::open_read_only(dir_ / "t.db");
    EXPECT_EQ(old.schema_version(), 3);
    EXPECT_FALSE(old.tune_trace());
  }
  auto store = ResultsStore::open_for_resume(dir_ / "t.db", plan_);
  EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
  store.add_tune_trace(trace());
  EXPECT_TRUE(store.tune_trace());
}

TEST_F(TuneTableTest, ADecisionWithoutTheSettingItsEstimateIsOfIsStoredAsNull) {
  TuneTrace t = trace();
  t.decisions[1].estimate_of.reset();
  { ResultsStore::create(dir_ / "t.db", {}, plan_, {}).add_tune_trace(t); }
  const auto read = ResultsStore::open_read_only(dir_ / "t.db").tune_trace();
  ASSERT_TRUE(read);
  ASSERT_EQ(read->decisions.size(), 2u);
  EXPECT_EQ(read->decisions[0].estimate_of, 700);
  EXPECT_FALSE(read->decisions[1].estimate_of);  // unknown, never 0
}

TEST_F(TuneTableTest, AVersionEightTraceWithoutEstimateOfReadsAsUnknownAndGainsTheColumnOnResume) {
  { ResultsStore::create(dir_ / "t.db", {}, plan_, {}); }
  // tune_decisions as a version 4-8 wattwise made it, with one decision in it.
  sql("DROP TABLE tune_decisions; "
      "CREATE TABLE tune_decisions (seq INTEGER PRIMARY KEY, kind TEXT NOT NULL, value REAL NOT NULL, "
      "at_iteration INTEGER NOT NULL, estimate REAL NOT NULL, interval_low REAL NOT NULL, "
      "interval_high REAL NOT NULL, iterations INTEGER NOT NULL, reason TEXT NOT NULL); "
      "INSERT INTO tune (id, knob, unit, metric, start_value, settled_value, profiling_iterations, "
      "iterations, "
      "dry_run) VALUES (1, 'power-limit', 'W', 'E', 700, 325, 120, 900, 0); "
      "INSERT INTO tune_decisions VALUES (0, 'probe', 450, 30, 1.0, 0.99, 1.01, 25, 'bracket [200, 700] W'); "
      "UPDATE meta SET value = '8' WHERE key = 'schema_version';");
  {
    const auto old = ResultsStore::open_read_only(dir_ / "t.db");
    EXPECT_EQ(old.schema_version(), 8);
    const auto read = old.tune_trace();
    ASSERT_TRUE(read);
    ASSERT_EQ(read->decisions.size(), 1u);
    EXPECT_EQ(read->decisions[0].value, 450);
    EXPECT_DOUBLE_EQ(read->decisions[0].estimate, 1.0);
    EXPECT_FALSE(read->decisions[0].estimate_of);  // not stored: unknown, never 0
  }
  {
    auto resumed = ResultsStore::open_for_resume(dir_ / "t.db", plan_);
    EXPECT_EQ(resumed.schema_version(), kResultsSchemaVersion);
  }
  // The upgrade added the column, NULL for the decision stored before it; a new one can be written there.
  sql("INSERT INTO tune_decisions (seq, kind, value, at_iteration, estimate, interval_low, interval_high, "
      "iterations, reason, estimate_of) VALUES (1, 'settle', 325, 150, 0.81, 0.80, 0.82, 20, 'precise', "
      "330);");
  const auto read = ResultsStore::open_read_only(dir_ / "t.db").tune_trace();
  ASSERT_TRUE(read);
  ASSERT_EQ(read->decisions.size(), 2u);
  EXPECT_FALSE(read->decisions[0].estimate_of);
  EXPECT_EQ(read->decisions[1].estimate_of, 330);
}

}  // namespace
}  // namespace wattwise::store
