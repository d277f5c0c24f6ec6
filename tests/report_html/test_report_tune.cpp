#include <gtest/gtest.h>

// g++-12 at -O3 warns of an overlapping memcpy inside std::string's assignment of a short literal below
// (a known false positive of -Wrestrict, GCC bug 105329); nothing here copies overlapping memory.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

#include "report/html/report_tune.hpp"

namespace wattwise::report::html {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

store::TuneDecisionRow decision(const char* kind, double value, std::uint64_t at, double estimate, double low,
                                double high, const char* reason) {
  store::TuneDecisionRow d;
  d.kind = kind;
  d.value = value;
  d.at_iteration = at;
  d.estimate = estimate;
  d.interval_low = low;
  d.interval_high = high;
  d.iterations = 5;
  d.reason = reason;
  return d;
}

store::TuneTrace trace() {
  store::TuneTrace t;
  t.knob = "power-limit";
  t.unit = "W";
  t.metric = "E";
  t.start_value = 700;
  t.settled_value = 300;
  t.iterations = 900;
  t.profiling_iterations = 80;
  t.decisions.push_back(decision("probe", 400, 10, 1.0, 0.99, 1.01, "start <700 W>"));
  t.decisions.push_back(decision("settle", 300, 60, 0.8, 0.79, 0.81, "precise enough"));
  t.decisions[0].estimate_of = 700;  // the baseline's estimate is of the start, not of 400 W held next
  t.decisions[1].estimate_of = 310;
  t.changes = {{400, 1.5, 12}, {300, 4.0, 70}};
  t.settings = {{300, 500, 0.1, 0.001, 30.0, 0.5},
                {400, 20, 0.1, 0.001, 40.0, 0.4},
                {700, 20, 0.1, 0.001, std::nullopt, std::nullopt}};
  return t;
}

TEST(TuneSection, DrawsEnergyAndTimeAgainstTheSettingAndTheSettingOverTime) {
  const std::string html = tune_section_html(trace());
  // Energy: the two settings with energy; time: all three; over time: the start and the two changes.
  EXPECT_EQ(count(html, "class=\"tune-point\""), 2u + 3u + 3u);
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "class=\"tune-steps\""), 1u);
  EXPECT_NE(html.find("settled at 300 W"), std::string::npos);
}

TEST(TuneSection, ListsEveryDecisionWithItsReasonEscaped) {
  const std::string html = tune_section_html(trace());
  EXPECT_EQ(count(html, "<tr><td>"), 2u);
  EXPECT_NE(html.find("start &lt;700 W&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<700 W>"), std::string::npos);
  EXPECT_NE(html.find("[0.790, 0.810]"), std::string::npos);
}

// Left to right as it happened: the setting measured, its estimate, then the setting held from then on.
TEST(TuneSection, EachDecisionNamesTheSettingItsEstimateIsOfBeforeTheSettingItHoldsNext) {
  const std::string html = tune_section_html(trace());
  EXPECT_NE(
      html.find("<th>measured</th><th>estimate</th><th>interval</th><th>iterations</th><th>then holds</th>"),
      std::string::npos)
      << html;
  EXPECT_NE(
      html.find("<td>10</td><td>700 W</td><td>1.000</td><td>[0.990, 1.010]</td><td>5</td><td>400 W</td>"),
      std::string::npos)
      << html;
  EXPECT_NE(
      html.find("<td>60</td><td>310 W</td><td>0.800</td><td>[0.790, 0.810]</td><td>5</td><td>300 W</td>"),
      std::string::npos)
      << html;
  // A trace stored before schema version 9 does not say: "?", never 0.
  auto old = trace();
  for (auto& d : old.decisions) d.estimate_of.reset();
  const std::string old_html = tune_section_html(old);
  EXPECT_EQ(count(old_html, "<td>?</td>"), 2u) << old_html;
  EXPECT_EQ(old_html.find("<td>0 W</td>"), std::string::npos);
  auto dry = trace();
  dry.dry_run = true;
  EXPECT_NE(tune_section_html(dry).find("<th>measured as</th>"), std::string::npos);
  EXPECT_NE(tune_section_html(dry).find("<th>then would hold</th>"), std::string::npos);
}

TEST(TuneSection, ADryRunSaysNothingWasChanged) {
  auto t = trace();
  t.dry_run = true;
  t.settled_value.reset();
  const std::string html = tune_section_html(t);
  EXPECT_NE(html.find("dry run: no setting was changed"), std::string::npos);
  EXPECT_NE(html.find("not settled"), std::string::npos);
}

TEST(TuneBox, SaysWhatTheTunerSettledOnInPlaceOfOneMeasurementsBox) {
  const std::string html = tune_box_html(trace());
  EXPECT_NE(html.find("Tuning: settled at 300 W"), std::string::npos) << html;
  EXPECT_NE(html.find("after 80 profiling iterations"), std::string::npos) << html;
  EXPECT_EQ(html.find("One measurement"), std::string::npos);
  EXPECT_EQ(html.find("nothing to compare"), std::string::npos);
}

TEST(TuneBox, HeldStartDryRunAndUnfinishedSearchAreSaidSo) {
  auto held = trace();
  held.settled_value = 700;
  held.decisions.back() = decision("settle", 700, 60, 0.99, 0.97, 1.01,
                                   "no setting beats the start value within the noise; settled at 700 W");
  EXPECT_NE(tune_box_html(held).find("Tuning: keep 700 W"), std::string::npos);
  EXPECT_NE(tune_box_html(held).find("No setting beats the start value within the noise"), std::string::npos);

  held.dry_run = true;
  EXPECT_NE(tune_box_html(held).find("the A/A test passed"), std::string::npos) << tune_box_html(held);
  auto fooled = trace();
  fooled.dry_run = true;  // settled at 300 W although every candidate ran at 700 W
  EXPECT_NE(tune_box_html(fooled).find("the A/A test failed"), std::string::npos) << tune_box_html(fooled);

  auto unfinished = trace();
  unfinished.settled_value.reset();
  unfinished.profiling_iterations = 140;
  const std::string html = tune_box_html(unfinished);
  EXPECT_NE(html.find("had not ended"), std::string::npos) << html;
  EXPECT_NE(html.find("140 profiling iterations so far"), std::string::npos) << html;
}

// With --range leaving the captured 700 W out, the search starts from the range's top (450 W), applied
// before the first iteration; holding the start value then keeps 450 W, not the captured 700 W, which the
// box said ("Tuning: keep 700 W") although the job ran at 450 W.
TEST(TuneBox, AHeldStartOutsideTheCapturedValueKeepsTheRangesEndNotTheCapturedOne) {
  auto held = trace();
  held.settled_value = 450;
  held.changes = {{450, 0.01, 0}};
  held.decisions.back() = decision("settle", 450, 60, 0.99, 0.97, 1.01,
                                   "no setting beats the start value within the noise; settled at 450 W");
  const std::string html = tune_box_html(held);
  EXPECT_NE(html.find("Tuning: keep 450 W"), std::string::npos) << html;
  EXPECT_EQ(html.find("keep 700 W"), std::string::npos) << html;
  EXPECT_NE(html.find("captured 700 W"), std::string::npos) << html;
}

// A search the job outlived changed the setting on the way: it did not "stay as captured"; the captured
// value was restored when the job ended.
TEST(TuneBox, AnUnfinishedSearchSaysTheCapturedValueWasRestoredNotThatItStayed) {
  auto unfinished = trace();
  unfinished.settled_value.reset();
  const std::string html = tune_box_html(unfinished);
  EXPECT_EQ(html.find("stayed as captured"), std::string::npos) << html;
  EXPECT_NE(html.find("restored to 700 W"), std::string::npos) << html;
}

}  // namespace
}  // namespace wattwise::report::html
