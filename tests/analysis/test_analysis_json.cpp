#include <gtest/gtest.h>

#include "analysis/analysis_json.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

TEST(AnalysisJson, FollowsTheRecommendationContract) {
  AnalysisOptions options;
  options.metrics = metrics_with({"eds:1.25"});
  const auto json =
      to_json(analyze({run_at(300, 100, 10), run_at(250, 85, 10.5), run_at(150, 70, 14)}, options));
  EXPECT_EQ(json["reference"]["setting"]["power_limit_w"], 300.0);
  const auto& recommendations = json["recommendations"];
  ASSERT_EQ(recommendations.size(), 8u);
  std::vector<std::string> names;
  for (const auto& r : recommendations) names.push_back(r["metric"]);
  EXPECT_EQ(names, (std::vector<std::string>{"E", "EDP", "ED2P", "EDS(k=2.0)", "EDS(k=1.5)", "gain-loss",
                                             "time", "EDS(k=1.25)"}));
  const auto& energy = recommendations[0];
  EXPECT_EQ(energy["setting"]["power_limit_w"], 150.0);
  EXPECT_DOUBLE_EQ(energy["energy_j"].get<double>(), 70);
  EXPECT_DOUBLE_EQ(energy["time_s"].get<double>(), 14);
  EXPECT_NEAR(energy["energy_vs_ref_pct"].get<double>(), -30, 1e-9);
  EXPECT_NEAR(energy["time_vs_ref_pct"].get<double>(), 40, 1e-9);
  EXPECT_TRUE(energy["significant"].is_null());
  // Nothing repeated: no interval for its slowdown, and the JSON says why; the reference has no slowdown.
  EXPECT_TRUE(energy["time_vs_ref_ci95_pct"].is_null());
  EXPECT_EQ(energy["time_vs_ref_ci95_from"], "no repeats");
  EXPECT_TRUE(recommendations[6]["time_vs_ref_ci95_from"].is_null());  // time: the 300 W reference
  EXPECT_EQ(energy["note"].get<std::string>().rfind("no repeats: significance unknown; picked from the per-setting "
                                                    "means",
                                                    0),
            0u)
      << energy["note"];
  EXPECT_EQ(energy["decision"]["method"], "means");
}

TEST(AnalysisJson, SettingsCarrySpreadMetricsAndParetoFlag) {
  const auto json = to_json(analyze({run_at(300, 100, 10), run_at(300, 104, 10), run_at(200, 120, 12)}));
  const auto& settings = json["settings"];
  ASSERT_EQ(settings.size(), 2u);
  const auto& capped = settings[0];
  EXPECT_EQ(capped["setting"]["power_limit_w"], 200.0);
  EXPECT_FALSE(capped["pareto"].get<bool>());  // slower and more energy than 300 W
  EXPECT_TRUE(capped["energy_j"]["std"].is_null());
  EXPECT_TRUE(capped["j_per_sample"].is_null());
  const auto& reference = settings[1];
  EXPECT_TRUE(reference["reference"].get<bool>());
  EXPECT_EQ(reference["n"], 2);
  EXPECT_DOUBLE_EQ(reference["energy_j"]["mean"].get<double>(), 102);
  EXPECT_NEAR(reference["energy_j"]["std"].get<double>(), 2.8284271247, 1e-9);
  EXPECT_DOUBLE_EQ(reference["metrics"]["EDS(k=2.0)"].get<double>(), 1.0);
}

// A setting's measurement error bar (the repeats' own bars averaged) stands beside the spread of its repeats,
// apart from it; unknown where any repeat's bar is unknown.
TEST(AnalysisJson, SettingsCarryTheMeasurementsErrorBarApartFromTheSpread) {
  RunRecord a = run_at(300, 100, 10), b = run_at(300, 104, 10, 1), c = run_at(200, 120, 12), d = run_at(200, 118, 12, 1);
  a.energy_uncertainty_j = 1.5;
  b.energy_uncertainty_j = 2.5;
  c.energy_uncertainty_j = 4.0;  // d's is unknown
  const auto json = to_json(analyze({a, b, c, d}));
  const auto& settings = json["settings"];
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_TRUE(settings[0]["energy_uncertainty_j"].is_null());
  EXPECT_DOUBLE_EQ(settings[1]["energy_uncertainty_j"].get<double>(), 2.0);
  EXPECT_NEAR(settings[1]["energy_j"]["std"].get<double>(), 2.8284271247, 1e-9);
}

}  // namespace
}  // namespace wattwise::analysis
