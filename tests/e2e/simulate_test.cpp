// `wattwise measure --simulate v100:resnet50`: fast, and calibrated on the published V100 default row.
#include <gtest/gtest.h>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

using SimulateTest = E2eTest;

TEST_F(SimulateTest, V100Resnet50EpochMatchesThePublishedDefaultRowWithinTwoPercent) {
  // No driver at all: --simulate must not need one.
  env_["WATTWISE_NVML_LIB"] = path("no-such-dir/libnvidia-ml.so.1").string();
  const auto r = wattwise({"measure", "--simulate", "v100:resnet50", "--json", path("m.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.wall_s, 3.0);
  const auto m = read_json("m.json");
  EXPECT_EQ(m.at("backend"), "simulated");
  const nlohmann::json* epoch = nullptr;
  for (const auto& p : m.at("phases"))
    if (p.at("name") == "epoch") epoch = &p;
  ASSERT_NE(epoch, nullptr) << m.at("phases").dump();
  const double count = epoch->at("count");
  ASSERT_GE(count, 1);
  // Published default (300 W) row: 266.4 s and 69.886 kJ per epoch.
  EXPECT_NEAR(epoch->at("time_s").get<double>() / count, 266.4, 0.02 * 266.4) << epoch->dump();
  ASSERT_TRUE(epoch->at("energy_j").is_number()) << epoch->dump();
  EXPECT_NEAR(epoch->at("energy_j").get<double>() / count, 69886, 0.02 * 69886) << epoch->dump();
}

}  // namespace
}  // namespace wattwise::e2e
