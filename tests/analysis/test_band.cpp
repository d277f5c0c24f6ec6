// The band of settings not distinguishable from the best, and the tie rule that picks inside it.
#include <gtest/gtest.h>

#include "analysis/band.hpp"
#include "analysis/recommend.hpp"
#include "analysis/statistics.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

// Repeats of one setting: energy centre +- spread_j (three runs, mean = centre, std = spread_j).
void add_repeats(std::vector<RunRecord>& runs, double limit_w, double centre_j, double spread_j,
                 double time_s) {
  runs.push_back(run_at(limit_w, centre_j - spread_j, time_s, 0));
  runs.push_back(run_at(limit_w, centre_j, time_s, 1));
  runs.push_back(run_at(limit_w, centre_j + spread_j, time_s, 2));
}

std::vector<double> band_limits(const Recommendation& r) {
  std::vector<double> limits;
  for (const BandMember& m : r.band) limits.push_back(m.setting.at("power_limit_w"));
  return limits;
}

constexpr std::size_t kReference300 = 3;  // settings are 150, 200, 250, 300

TEST(Band, IncludesASettingWithinTheNoiseAndPicksTheFastestInIt) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 10, 10);
  add_repeats(runs, 250, 903, 10, 11);  // 3 J (0.3%) above the best; the noise bound is ~15 J
  add_repeats(runs, 200, 900, 10, 12);  // lowest mean energy: the best
  add_repeats(runs, 150, 950, 10, 14);  // 50 J above: beyond the noise
  const Recommendation r = recommend(aggregate_runs(runs), kReference300, {MetricKind::kEnergy});
  EXPECT_EQ(r.best_index, 1u);
  EXPECT_TRUE(r.band_known);
  EXPECT_EQ(band_limits(r), (std::vector<double>{200, 250}));
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 250);  // the faster of the two
  EXPECT_EQ(r.tie_rule, "fastest within 0.5%");
  EXPECT_NE(r.note.find("picked the fastest within 0.5% of the 2 settings"), std::string::npos) << r.note;
}

TEST(Band, TieRuleNeverPicksAMemberMoreThanHalfAPercentWorse) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 10, 10);
  add_repeats(runs, 250, 908, 10, 11);  // in the band (~15 J bound) but 0.9% above the best
  add_repeats(runs, 200, 900, 10, 12);
  const Recommendation r = recommend(aggregate_runs(runs), 2, {MetricKind::kEnergy});
  EXPECT_EQ(band_limits(r), (std::vector<double>{200, 250}));
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 200);  // faster 250 W is outside the 0.5% margin
}

TEST(Band, ExcludesASettingWhenTheRepeatsAreTight) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 0.5, 10);
  add_repeats(runs, 250, 905, 0.5, 11);  // the same 5 J, but the noise bound is now ~0.9 J
  add_repeats(runs, 200, 900, 0.5, 12);
  add_repeats(runs, 150, 950, 0.5, 14);
  const Recommendation r = recommend(aggregate_runs(runs), kReference300, {MetricKind::kEnergy});
  EXPECT_EQ(band_limits(r), (std::vector<double>{200}));
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 200);
}

TEST(Band, SingleRepeatSettingsBorrowThePooledSpread) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 10, 10);
  add_repeats(runs, 200, 900, 10, 12);   // the best, std 10 J
  runs.push_back(run_at(250, 910, 11));  // once: 10 J above, within the pooled noise
  runs.push_back(run_at(150, 990, 14));  // once: 90 J above, beyond it
  const Recommendation r = recommend(aggregate_runs(runs), kReference300, {MetricKind::kEnergy});
  ASSERT_EQ(band_limits(r), (std::vector<double>{200, 250}));
  EXPECT_FALSE(r.band[0].borrowed_error);
  EXPECT_TRUE(r.band[1].borrowed_error);
  // Pooled std of one run: 10 J of 1000 J reference -> 0.01 in E / E_ref.
  EXPECT_NEAR(*r.band[1].metric_standard_error, 0.01, 1e-12);
}

TEST(Band, IsUnknownWithoutAnyRepeats) {
  const std::vector<RunRecord> runs = {run_at(300, 1000, 10), run_at(250, 901, 11), run_at(200, 900, 12),
                                       run_at(150, 950, 14)};
  const Recommendation r = recommend(aggregate_runs(runs), kReference300, {MetricKind::kEnergy});
  EXPECT_FALSE(r.band_known);
  EXPECT_EQ(band_limits(r), (std::vector<double>{200}));
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 200);  // no band to pick from: the best
}

TEST(Band, TimeMetricKeepsTheFastestEvenWhenItsBandIsWide) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(run_at(300, 1000, 10.0 + 0.2 * (i - 1), i));  // fastest on the means
    runs.push_back(run_at(250, 900, 10.05 + 0.2 * (i - 1), i));  // 0.5% slower: within the noise
    runs.push_back(run_at(150, 800, 14.0 + 0.2 * (i - 1), i));
  }
  const Recommendation r = recommend(aggregate_runs(runs), 2, {MetricKind::kTime});
  EXPECT_EQ(band_limits(r), (std::vector<double>{250, 300}));
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 300);  // the one tie rule: the fastest
  EXPECT_EQ(r.tie_rule, "fastest within 0.5%");
}

TEST(Band, LeavesOutSettingsThatMaxSlowdownExcludes) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 10, 10);
  add_repeats(runs, 250, 900, 10, 10.5);
  add_repeats(runs, 200, 905, 10, 13);  // within the noise of 250 W's energy but 30% slower
  const Recommendation r = recommend(aggregate_runs(runs), 2, {MetricKind::kEnergy}, 0.10);
  EXPECT_EQ(band_limits(r), (std::vector<double>{250}));
}

TEST(Band, ReferencePickedInsideTheBandIsNotCalledTheBest) {
  std::vector<RunRecord> runs;
  add_repeats(runs, 300, 1000, 10, 10);  // the reference, fastest
  add_repeats(runs, 250, 997, 10, 11);   // lowest energy by 3 J (0.3%): within the noise and margin
  const Recommendation r = recommend(aggregate_runs(runs), 1, {MetricKind::kEnergy});
  EXPECT_DOUBLE_EQ(r.setting.at("power_limit_w"), 300);
  EXPECT_EQ(r.note.rfind("the reference setting is within the noise of the best; picked the fastest", 0), 0u)
      << r.note;
}

TEST(Band, OneSidedQuantilesMatchTheTable) {
  EXPECT_NEAR(t_quantile_95(1), 6.314, 5e-4);
  EXPECT_NEAR(t_quantile_95(4), 2.132, 5e-4);
  EXPECT_NEAR(t_quantile_95(1000), 1.646, 5e-4);
  EXPECT_LT(t_quantile_95(10), t_quantile_975(10));
}

}  // namespace
}  // namespace wattwise::analysis
