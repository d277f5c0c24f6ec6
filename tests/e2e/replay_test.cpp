// `--simulate csv:PATH`: sweeps and measurements of a replayed table, with the real binary.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

using ReplayTest = E2eTest;

// One row per setting, in the published spelling (energy_kJ, power_limit_W, a label and avg power kept).
constexpr const char* kTable =
    "label,power_limit_W,avg_power_W,energy_kJ,time_s\n"
    "min,150,100,1.2,12\nmid,200,130,1.3,10\ndefault,300,200,1.6,8\n";

TEST_F(ReplayTest, SweepOverAReplayedTableReproducesItsMeasuredSettings) {
  std::ofstream(path("table.csv")) << kTable;
  const auto r = wattwise({"sweep", "--simulate", "csv:" + path("table.csv").string(), "--power-limit",
                           "150:300:50", "--db", path("s.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto a = wattwise({"analyze", path("s.db").string(), "--json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const auto json = nlohmann::json::parse(a.out);
  ASSERT_EQ(json.at("settings").size(), 4u) << a.out;
  // Measured limits within the 1% default noise (one run each, seeded), 250 W between 200 and 300 W.
  const std::map<double, std::pair<double, double>> expected = {
      {150, {12, 1200}}, {200, {10, 1300}}, {250, {9, 1450}}, {300, {8, 1600}}};
  for (const auto& s : json.at("settings")) {
    const double limit = s.at("setting").at("power_limit_w");
    const auto [time_s, energy_j] = expected.at(limit);
    EXPECT_NEAR(s.at("time_s").at("mean").get<double>(), time_s, 0.04 * time_s) << s.dump();
    EXPECT_NEAR(s.at("energy_j").at("mean").get<double>(), energy_j, 0.04 * energy_j) << s.dump();
  }
}

TEST_F(ReplayTest, SweepOutsideTheReplayedRangeIsRefusedBeforeAnyRun) {
  std::ofstream(path("table.csv")) << kTable;
  const auto r = wattwise({"sweep", "--simulate", "csv:" + path("table.csv").string(), "--power-limit",
                           "100:300:50", "--db", path("s.db").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("150"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("s.db")));
}

TEST_F(ReplayTest, MeasureReplaysTheHighestLimitOfASweepDatabase) {
  std::ofstream(path("table.csv")) << kTable;
  ASSERT_EQ(wattwise({"sweep", "--simulate", "csv:" + path("table.csv").string(), "--power-limit", "150,300",
                      "--db", path("s.db").string()})
                .exit_code,
            0);
  // The database replays like a CSV: its default is its highest limit, 300 W (about 8 s, 1600 J).
  const auto m =
      wattwise({"measure", "--simulate", "csv:" + path("s.db").string(), "--json", path("m.json").string()});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  const auto json = read_json("m.json");
  EXPECT_NEAR(json.at("wall_s").get<double>(), 8, 0.5) << json.dump();
}

TEST_F(ReplayTest, AMissingTableIsOneLineAndExitThree) {
  const auto r = wattwise({"sweep", "--simulate", "csv:" + path("none.csv").string(), "--power-limit", "200",
                           "--db", path("s.db").string()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("none.csv"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattwise::e2e
