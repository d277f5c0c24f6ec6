// Schema version 3: node energy per run in run_node_energy, and the upgrade of a version 2 file that only
// adds the table.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "../support/temp_dir.hpp"
#include "store/results_store.hpp"

namespace wattwise::store {
namespace {

namespace fs = std::filesystem;

class NodeEnergyStoreTest : public ::testing::Test {
 protected:
  static RunRecord run(std::size_t plan_index) {
    RunRecord r;
    r.plan_index = plan_index;
    r.started_at = r.ended_at = "2026-11-24T09:00:00Z";
    r.exit_status = 0;
    r.time_s = 10;
    r.energy_j = 3000;
    r.method = "counter";
    return r;
  }

  // Runs SQL on the file directly, as an older wattwise or a user's shell would.
  void sql(const std::string& text) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "s.db").c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, text.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  const nlohmann::json plan_ = {{"knobs", nlohmann::json::array()}};
  const wattwise::testing::TempDir temp_{"ww-node-store"};
  const fs::path& dir_ = temp_.path();
};

TEST_F(NodeEnergyStoreTest, NodeSourcesOfARunAreStoredAndReadBack) {
  {
    auto store = ResultsStore::create(dir_ / "s.db", {}, plan_, {});
    EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
    RunRecord r = run(0);
    r.node = {{"package-0", "cpu_package", "powercap intel-rapl:0 energy_uj", 520.5, 52.05},
              {"meter", "meter", "meter `ipmi-power.sh`, W", std::nullopt, std::nullopt}};
    store.add_run(r);
    store.add_run(run(1));  // no node source
  }
  const auto runs = ResultsStore::open_read_only(dir_ / "s.db").runs();
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(runs[0].node.size(), 2u);
  EXPECT_EQ(runs[0].node[0].source, "package-0");
  EXPECT_EQ(runs[0].node[0].kind, "cpu_package");
  EXPECT_EQ(runs[0].node[0].energy_j, 520.5);
  EXPECT_EQ(runs[0].node[0].avg_power_w, 52.05);
  EXPECT_FALSE(runs[0].node[1].energy_j);  // absent stays NULL, never 0
  EXPECT_TRUE(runs[1].node.empty());
}

TEST_F(NodeEnergyStoreTest, VersionTwoFileIsReadWithoutNodeFiguresAndUpgradedOnResume) {
  {
    auto store = ResultsStore::create(dir_ / "s.db", {}, plan_, {});
    store.add_run(run(0));
  }
  // What a version 2 wattwise wrote: no run_node_energy table.
  sql("DROP TABLE run_node_energy; UPDATE meta SET value = '2' WHERE key = 'schema_version';");
  {
    const auto old = ResultsStore::open_read_only(dir_ / "s.db");
    EXPECT_EQ(old.schema_version(), 2);
    ASSERT_EQ(old.runs().size(), 1u);
    EXPECT_TRUE(old.runs()[0].node.empty());
  }
  auto store = ResultsStore::open_for_resume(dir_ / "s.db", plan_);
  EXPECT_EQ(store.schema_version(), kResultsSchemaVersion);
  RunRecord r = run(1);
  r.node = {{"dram-0", "dram", "powercap intel-rapl:0:0 energy_uj", 80.0, 8.0}};
  store.add_run(r);
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 2u);  // the old run kept as it was
  EXPECT_TRUE(runs[0].node.empty());
  ASSERT_EQ(runs[1].node.size(), 1u);
  EXPECT_EQ(runs[1].node[0].energy_j, 80.0);
}

TEST_F(NodeEnergyStoreTest, FailedRunStoredAgainReplacesItsNodeRows) {
  auto store = ResultsStore::create(dir_ / "s.db", {}, plan_, {});
  RunRecord failed = run(0);
  failed.error = "exit status 1";
  failed.node = {{"package-0", "cpu_package", "powercap", 1.0, 1.0}};
  store.add_run(failed);
  RunRecord again = run(0);
  again.node = {{"package-0", "cpu_package", "powercap", 2.0, 2.0}};
  store.add_run(again);  // the same primary key (run, source) must not collide with the failed run's row
  const auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].node.size(), 1u);
  EXPECT_EQ(runs[0].node[0].energy_j, 2.0);
}

// Meta settings_changed_by (docs/results-schema.md): the path of the first invocation, and a resume that
// took another path adds it once.
TEST_F(NodeEnergyStoreTest, SettingsChangedByRecordsEachPathOnceInTheOrderFirstUsed) {
  {
    auto store = ResultsStore::create(dir_ / "s.db", {}, plan_, {});
    EXPECT_EQ(store.meta("settings_changed_by"), "");  // a file that never said
    store.record_settings_changed_by("root");
    store.record_settings_changed_by("root");
  }
  EXPECT_EQ(ResultsStore::open_read_only(dir_ / "s.db").meta("settings_changed_by"), "root");
  {
    auto store = ResultsStore::open_for_resume(dir_ / "s.db", plan_);
    store.record_settings_changed_by("daemon");
    store.record_settings_changed_by("root");
    store.record_settings_changed_by("daemon");
  }
  EXPECT_EQ(ResultsStore::open_read_only(dir_ / "s.db").meta("settings_changed_by"), "root,daemon");
}

}  // namespace
}  // namespace wattwise::store
