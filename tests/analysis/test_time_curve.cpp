#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/time_curve.hpp"
#include "core/error.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

// A time curve whose log is a quadratic in the knob is what the local fit assumes: it reads it back exactly,
// at the ends of the range (a one-sided window) as in the middle.
TEST(SmoothedTimes, ReadsBackACurveWhoseLogIsAQuadratic) {
  const auto truth = [](double x) { return std::exp(4.6 + 0.002 * (300 - x) + 1e-5 * (300 - x) * (300 - x)); };
  std::vector<TimeCurvePoint> points;
  for (double x = 150; x <= 300; x += 5) points.push_back({x, {truth(x), truth(x)}});
  const std::vector<double> fitted = smoothed_times(points);
  ASSERT_EQ(fitted.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_NEAR(fitted[i] / truth(points[i].x), 1, 1e-9) << points[i].x;
}

// Each run weighs in: a value's own repeats count as much as its neighbours' runs, and a value alone within
// reach keeps its own geometric mean.
TEST(SmoothedTimes, AValueAloneKeepsItsGeometricMean) {
  const std::vector<TimeCurvePoint> points = {{150, {100, 121}}, {300, {90}}};
  const std::vector<double> fitted = smoothed_times(points);
  EXPECT_NEAR(fitted[0], 110, 1e-9);  // sqrt(100 x 121)
  EXPECT_NEAR(fitted[1], 90, 1e-9);
}

TEST(SmoothedTimes, RejectsARunWithoutATimeAndAValueWithoutRuns) {
  EXPECT_THROW(smoothed_times(std::vector<TimeCurvePoint>{{150, {100}}, {200, {0}}, {300, {90}}}), Error);
  EXPECT_THROW(smoothed_times(std::vector<TimeCurvePoint>{{150, {100}}, {200, {}}, {300, {90}}}), Error);
  EXPECT_THROW(smoothed_times(std::vector<TimeCurvePoint>{{150, {100}}, {200, {HUGE_VAL}}, {300, {90}}}),
               Error);
  EXPECT_TRUE(smoothed_times(std::vector<TimeCurvePoint>{}).empty());
  EXPECT_FALSE(times_fittable(std::vector<TimeCurvePoint>{{150, {100}}, {200, {0}}, {300, {90}}}));
  EXPECT_FALSE(times_fittable(std::vector<TimeCurvePoint>{{150, {100}}, {200, {HUGE_VAL}}, {300, {90}}}));
  EXPECT_FALSE(times_fittable(std::vector<TimeCurvePoint>{{150, {100}}, {200, {}}, {300, {90}}}));
  EXPECT_TRUE(times_fittable(std::vector<TimeCurvePoint>{{150, {100}}, {200, {95}}, {300, {90}}}));
}

// A database can hold a successful run whose time is 0 (written by another tool, or edited by hand): the
// time curve takes logs, so there the limit is judged on the means, as before the curve, and the note says
// so, rather than every `analyze` of it ending in an internal error ("a bug in wattwise", exit 70).
TEST(HeadlineTest, ARunWithoutAPositiveTimeIsJudgedOnTheMeansNotAnInternalError) {
  std::vector<RunRecord> runs;
  for (double w = 150; w <= 300; w += 10)
    for (int k = 0; k < 2; ++k)
      runs.push_back(run_at(w, 700 + 2 * (w - 150), 100 * (1 + 0.45 * std::pow((300 - w) / 150, 2)), k));
  runs[2].time_s = 0;  // 160 W, its first run
  AnalysisOptions options;
  Analysis a;
  ASSERT_NO_THROW(a = analyze(runs, options));
  EXPECT_FALSE(a.headline.pick.time_vs_ref_curve_pct.has_value());
  EXPECT_NE(a.headline.pick.note.find("judged on the means"), std::string::npos) << a.headline.pick.note;
  EXPECT_EQ(a.headline.pick.note.find("judged on the time curve"), std::string::npos) << a.headline.pick.note;
}

// The headline (the lowest energy at most 10% slower) on 400 noisy sweeps of 150..300 W, 3 runs a value at
// 1% time noise: time rises smoothly as the limit falls, 230 W is 9.8% slower than 300 W (the truth), 225 W
// 11.25% (over the limit). Judged on each value's own mean (main before the time curve), the pick broke the
// limit in 41 sweeps and was the truth in 192; judged on the time curve through the neighbours, in 3 and
// 244. The rest are a step or more too fast: the reference's own noise, which no curve removes.
TEST(HeadlineTest, TheSlowdownLimitIsJudgedOnTheTimeCurveNotOnOneValuesMean) {
  std::mt19937_64 random(2026);
  std::normal_distribution<double> noise(0.0, 0.01);
  const auto slowdown = [](double w) { return 0.45 * std::pow((300 - w) / 150, 2); };
  AnalysisOptions options;
  options.metrics = {MetricSpec{MetricKind::kEnergy}};
  options.headline_metric = MetricSpec{MetricKind::kEnergy};
  const int sweeps = 400;
  int over = 0, truth = 0, too_fast = 0;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    std::vector<RunRecord> runs;
    for (double w = 150; w <= 300; w += 5)
      for (int k = 0; k < 3; ++k)
        runs.push_back(run_at(w, (700 + 2 * (w - 150)) * (1 + 0.5 * noise(random)),
                              100 * (1 + slowdown(w)) * (1 + noise(random)), k));
    const Analysis a = analyze(runs, options);
    const double pick = a.headline.pick.setting.at("power_limit_w");
    over += pick <= 225;
    truth += pick == 230;
    too_fast += pick >= 235;
    ASSERT_TRUE(a.headline.pick.time_vs_ref_curve_pct.has_value());
    // The pick qualified on the curve: its slowdown there is within the limit, whatever its own mean says.
    ASSERT_LE(*a.headline.pick.time_vs_ref_curve_pct, 10 + 1e-9) << "sweep " << sweep;
  }
  EXPECT_LT(over, sweeps / 40) << "over the limit in " << over << " of " << sweeps;
  EXPECT_GT(truth, sweeps * 55 / 100) << "the truth in " << truth << "; too fast in " << too_fast;
}

// A sharp knee (review8, docs/evidence/adaptive-sweep.md "The time curve reviewed"): time flat above 250 W and
// ~1/P below it, runs 0.1% apart, 100..300 W. The quadratic through 225 W's neighbours rounds the knee off and
// read 225 W +10.0% slower, its own runs +11.1% (95% interval +10.9% to +11.4%): the headline broke its limit
// by a point on runs that leave no doubt. A value whose own runs are over the limit beyond their noise does
// not qualify, whatever the curve says; the pick is 230 W, +8.7%.
TEST(HeadlineTest, AValueOverTheLimitBeyondItsRunsNoiseDoesNotQualifyOnTheCurve) {
  AnalysisOptions options;
  const Analysis a = analyze(testing::runs_with_a_sharp_knee_at_250_w(), options);
  EXPECT_EQ(a.headline.pick.setting.at("power_limit_w"), 230);
  EXPECT_LE(a.headline.pick.time_vs_ref_pct, 10);
  ASSERT_TRUE(a.headline.pick.time_vs_ref_curve_pct.has_value());
}

}  // namespace
}  // namespace wattwise::analysis

namespace wattwise::analysis {
namespace {

// The limit in the note is the one given: --max-slowdown 7% is 0.07, and 0.07 x 100 is 7.000000000000001 in
// binary, which "{}" printed whole ("at most 7.000000000000001% slower").
TEST(HeadlineTest, TheNoteSaysTheLimitAsGiven) {
  std::vector<RunRecord> runs;
  for (double w = 150; w <= 300; w += 10)
    for (int k = 0; k < 2; ++k)
      runs.push_back(run_at(w, 700 + 2 * (w - 150), 100 * (1 + 0.45 * std::pow((300 - w) / 150, 2)), k));
  AnalysisOptions options;
  options.max_slowdown = parse_max_slowdown("7%");
  options.headline_max_slowdown = options.max_slowdown;
  const Analysis a = analyze(runs, options);
  EXPECT_NE(a.headline.pick.note.find("only settings at most 7% slower than the reference qualified"),
            std::string::npos)
      << a.headline.pick.note;
}

}  // namespace
}  // namespace wattwise::analysis

namespace wattwise::analysis {
namespace {

// A per-metric pick within --max-slowdown on the time curve but over it on its own mean: its note (printed
// under the text's per-metric table, whose "vs ref" column shows the mean) gives the curve's figure, so the
// column's +10.4% under "at most 10% slower" is explained there, as the headline's curve line explains it.
TEST(HeadlineTest, ANoteOfAPickOverTheLimitOnItsMeanGivesItsCurveFigure) {
  std::vector<RunRecord> runs;
  for (double w = 150; w <= 300; w += 5) {
    const double slowdown = w == 230 ? 0.104 : 0.45 * ((300 - w) / 150) * ((300 - w) / 150);
    for (int k = 0; k < 2; ++k)
      runs.push_back(run_at(w, 700 + 2 * (w - 150), 100 * (1 + slowdown) * (k ? 1.005 : 0.995), k));
  }
  AnalysisOptions options;
  options.max_slowdown = 0.10;
  const Analysis a = analyze(runs, options);
  const Recommendation& e = a.recommendations.front();
  ASSERT_EQ(e.metric.kind, MetricKind::kEnergy);
  ASSERT_DOUBLE_EQ(e.setting.at("power_limit_w"), 230);
  EXPECT_NE(e.note.find("judged on the time curve through each setting's neighbours: this one is +9.9% on "
                        "it, its own runs' mean +10.4%"),
            std::string::npos)
      << e.note;
  const Recommendation& t = a.recommendations.back();  // time: the reference, within on both
  EXPECT_EQ(t.note.find("this one is"), std::string::npos) << t.note;
}

}  // namespace
}  // namespace wattwise::analysis
