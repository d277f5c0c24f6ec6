// The headline's lines about its pick's slowdown against the limit (issue 21 item 6): an interval from a
// spread borrowed from other settings says so; a sweep without any repeats says its pick's slowdown has no
// interval, rather than nothing.
#include <gtest/gtest.h>

#include "../analysis/run_builders.hpp"
#include "analysis/analysis.hpp"
#include "report/analysis_report.hpp"

namespace wattwise::report {
namespace {

using analysis::testing::run_at;

analysis::AnalysisOptions energy_headline() {
  analysis::AnalysisOptions options;
  options.metrics = {analysis::MetricSpec{analysis::MetricKind::kEnergy}};
  options.headline_metric = analysis::MetricSpec{analysis::MetricKind::kEnergy};
  return options;
}

TEST(HeadlineText, ASweepWithoutRepeatsSaysItsSlowdownHasNoInterval) {
  const auto a = analysis::analyze(
      {run_at(300, 1000, 100), run_at(250, 850, 109), run_at(200, 750, 112), run_at(150, 700, 140)},
      energy_headline());
  const std::string text = headline_text(a);
  EXPECT_NE(
      text.find("its slowdown, +9.0%, has no interval (no repeats): within the noise its time may be over "
                "the 10% limit"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("time may be over the 10% limit within the noise"), std::string::npos) << text;
}

// 250 W ran once, 9% slower; the other limits' repeats spread 1.5%: its interval reaches past 10%, from the
// pooled spread, and the line says where the spread came from.
TEST(HeadlineText, AnIntervalFromThePooledSpreadSaysSo) {
  std::vector<analysis::RunRecord> runs = {run_at(250, 850, 109)};
  const double wobble[] = {0.985, 1.0, 1.015};
  for (int k = 0; k < 3; ++k) {
    runs.push_back(run_at(300, 1000, 100 * wobble[k], k));
    runs.push_back(run_at(280, 950, 101 * wobble[k], k));
    runs.push_back(run_at(150, 700, 140 * wobble[k], k));
  }
  const auto a = analysis::analyze(runs, energy_headline());
  ASSERT_EQ(a.headline.pick.time_vs_ref_ci95_from, analysis::SlowdownIntervalFrom::kPooledSpread);
  const std::string text = headline_text(a);
  EXPECT_NE(text.find("its time may be over the 10% limit within the noise: +9.0% (95% interval"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(", from the time spread of the settings run more than once); more runs"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("has no interval"), std::string::npos) << text;
}


// 150..300 W, time rising smoothly as the limit falls (230 W 9.8% slower than 300 W, 225 W 11.25%), every
// value run twice at +-0.5%; 230 W's two runs came in 10.4% slower. On the time curve through its neighbours
// 230 W is within the 10% limit and is the pick; the lines say both figures, so that the table's +10.4%
// beside an "at most 10% slower" headline is explained.
TEST(HeadlineText, APickWithinTheLimitOnTheTimeCurveButOverItOnItsOwnMeanSaysBoth) {
  std::vector<analysis::RunRecord> runs;
  for (double w = 150; w <= 300; w += 5) {
    const double slowdown = w == 230 ? 0.104 : 0.45 * ((300 - w) / 150) * ((300 - w) / 150);
    for (int k = 0; k < 2; ++k)
      runs.push_back(run_at(w, 700 + 2 * (w - 150), 100 * (1 + slowdown) * (k ? 1.005 : 0.995), k));
  }
  const auto a = analysis::analyze(runs, energy_headline());
  ASSERT_DOUBLE_EQ(a.headline.pick.setting.at("power_limit_w"), 230);
  ASSERT_TRUE(a.headline.pick.time_vs_ref_curve_pct.has_value());
  EXPECT_LE(*a.headline.pick.time_vs_ref_curve_pct, 10);
  EXPECT_GT(a.headline.pick.time_vs_ref_pct, 10);
  const std::string text = headline_text(a);
  EXPECT_NE(text.find("on the time curve through its neighbours' runs it is +9."), std::string::npos) << text;
  EXPECT_NE(text.find("(10% allowed); its own runs' mean, +10.4%, is over the limit by their noise"),
            std::string::npos)
      << text;
}

// Where the pick's own mean is within the limit too, nothing more is said.
TEST(HeadlineText, APickWithinTheLimitOnBothSaysNothingOfTheCurve) {
  std::vector<analysis::RunRecord> runs;
  for (double w = 150; w <= 300; w += 5)
    for (int k = 0; k < 2; ++k)
      runs.push_back(
          run_at(w, 700 + 2 * (w - 150), 100 * (1 + 0.45 * ((300 - w) / 150) * ((300 - w) / 150)), k));
  const auto a = analysis::analyze(runs, energy_headline());
  ASSERT_DOUBLE_EQ(a.headline.pick.setting.at("power_limit_w"), 230);
  EXPECT_EQ(headline_text(a).find("on the time curve"), std::string::npos) << headline_text(a);
}

}  // namespace
}  // namespace wattwise::report

namespace wattwise::report {
namespace {

// A mean a hair over the limit (+10.03% against 10%) is printed so that it reads over it: "+10.0%, is over
// the limit" beside "(10% allowed)" says a figure is over a limit it equals.
TEST(HeadlineText, AMeanJustOverTheLimitIsPrintedOverIt) {
  analysis::Headline h;
  h.max_slowdown = 0.10;
  h.pick.time_vs_ref_pct = 10.03;
  h.pick.time_vs_ref_curve_pct = 9.84;
  const std::string line = curve_judgement(h, CaveatStyle::kHeadlineLine);
  EXPECT_NE(line.find("it is +9.8% (10% allowed); its own runs' mean, +10.03%, is over the limit"),
            std::string::npos)
      << line;
  h.pick.time_vs_ref_pct = 10.4;  // one decimal where one shows it over
  EXPECT_NE(curve_judgement(h, CaveatStyle::kHeadlineLine).find("mean, +10.4%, is over"), std::string::npos);
  h.max_slowdown = 0;  // --max-slowdown 0%: +0.02% is over it, "+0.0%" would not read so
  h.pick.time_vs_ref_pct = 0.02;
  h.pick.time_vs_ref_curve_pct = -0.4;
  EXPECT_NE(curve_judgement(h, CaveatStyle::kHeadlineLine).find("mean, +0.02%, is over"), std::string::npos)
      << curve_judgement(h, CaveatStyle::kHeadlineLine);
}

}  // namespace
}  // namespace wattwise::report

namespace wattwise::report {
namespace {

// The per-metric table's heading says the limit as given: --max-slowdown 2.5% read "at most 2% slower".
TEST(AnalysisText, TheBestPerMetricHeadingSaysTheLimitAsGiven) {
  auto options = energy_headline();
  options.max_slowdown = analysis::parse_max_slowdown("2.5%");
  const auto a = analysis::analyze(
      {run_at(300, 1000, 100), run_at(250, 850, 102), run_at(200, 750, 112), run_at(150, 700, 140)}, options);
  const std::string text = analysis_text(a);
  EXPECT_NE(text.find("Best setting per metric (at most 2.5% slower than the reference)"), std::string::npos)
      << text;
}

}  // namespace
}  // namespace wattwise::report

namespace wattwise::report {
namespace {

// Where the time curve does not follow the times (a sharp knee: flat above 250 W, 1/P below it) 225 W
// qualified on the curve (+10.0%) while its own runs, 0.1% apart, were +11.1%, and the lines had to explain
// a pick over the limit. A value over it beyond its runs' noise no longer qualifies (slowdown_limit.hpp):
// the pick is 230 W, within the limit on its runs too, and the lines blame no noise.
TEST(HeadlineText, AValueOverTheLimitBeyondItsNoiseIsNotPickedSoNoNoiseIsBlamed) {
  const auto a = analysis::analyze(analysis::testing::runs_with_a_sharp_knee_at_250_w(), energy_headline());
  ASSERT_DOUBLE_EQ(a.headline.pick.setting.at("power_limit_w"), 230);
  ASSERT_TRUE(a.headline.pick.time_vs_ref_ci95_pct.has_value());
  EXPECT_LT(a.headline.pick.time_vs_ref_ci95_pct->second, 10);  // within the limit on its runs as well
  const std::string text = headline_text(a);
  EXPECT_EQ(text.find("by their noise"), std::string::npos) << text;
  EXPECT_EQ(text.find("over the"), std::string::npos) << text;
  EXPECT_NE(text.find("power_limit_w=230"), std::string::npos) << text;
}

}  // namespace
}  // namespace wattwise::report

namespace wattwise::report {
namespace {

// Without repeats the noise is unknown: a pick within the limit on the time curve (+9.9%) whose one run is
// over it (+10.4%) was said to be over "by their noise" right under "within the noise its time may be over
// the 10% limit" (it is over, on its run). One line says what is known.
TEST(HeadlineText, APickOverTheLimitOnItsOneRunDoesNotBlameANoiseNoRepeatsMeasured) {
  std::vector<analysis::RunRecord> runs;
  for (double w = 150; w <= 300; w += 5) {
    const double slowdown = w == 230 ? 0.104 : 0.45 * ((300 - w) / 150) * ((300 - w) / 150);
    runs.push_back(run_at(w, 700 + 2 * (w - 150), 100 * (1 + slowdown), 0));
  }
  const auto a = analysis::analyze(runs, energy_headline());
  ASSERT_DOUBLE_EQ(a.headline.pick.setting.at("power_limit_w"), 230);
  const std::string text = headline_text(a);
  EXPECT_EQ(text.find("by their noise"), std::string::npos) << text;
  EXPECT_EQ(text.find("may be over the 10% limit"), std::string::npos) << text;
  EXPECT_NE(text.find("on the time curve through its neighbours' runs it is +9.9% (10% allowed); its own "
                      "run, +10.4%, is over the limit, by its noise or not: no setting was run twice to tell "
                      "(repeats of it and the reference would)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace wattwise::report
