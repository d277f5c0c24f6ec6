// What `wattwise tune` shows of its decisions: the summary's table, the live line and the JSON name the
// setting each estimate is of, apart from the setting held next.
#include "tune/live_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace wattwise::tune {
namespace {

Decision decision(DecisionKind kind, double value, std::uint64_t at, double of, double estimate, double low,
                  double high, std::uint64_t iterations, std::string reason) {
  Decision d;
  d.kind = kind;
  d.value = value;
  d.at_iteration = at;
  d.estimate_of = of;
  d.estimate = estimate;
  d.interval_low = low;
  d.interval_high = high;
  d.iterations = iterations;
  d.reason = std::move(reason);
  return d;
}

// The demo's trace (v100:resnet50, seed 1): the baseline at the start value, a candidate, then the start
// value measured again, whose decision rests on the candidate measured before it (160 W), not on the start
// value just left nor on the setting held next.
LiveTuningResult result() {
  LiveTuningResult r;
  r.metric = "E";
  r.captured_value = 300;
  r.start_value = 300;
  r.iterations_seen = 3000;
  r.decisions = {
      decision(DecisionKind::kProbe, 205, 182, 300, 1.0, 0.993, 1.007, 5, "start 300 W: stationary"),
      decision(DecisionKind::kProbe, 245, 196, 205, 0.810, 0.776, 0.843, 11,
               "205 W: iteration cap; bracket [150, 300] W"),
      decision(DecisionKind::kProbe, 155, 271, 160, 0.711, 0.696, 0.727, 11,
               "start 300 W again: 1.001 of its baseline energy; 160 W: 0.711 [0.696, 0.727]"),
      decision(DecisionKind::kSettle, 150, 363, 150, 0.685, 0.669, 0.701, 15, "150 W again: confirmed")};
  r.settled = 150;
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The line of the decisions' table whose iteration column reads `at`.
std::string row_at(const std::string& text, const std::string& at) {
  for (const auto& line : lines(text)) {
    std::istringstream words(line);
    std::string kind, iteration;
    words >> kind >> iteration;
    if ((kind == "probe" || kind == "settle" || kind == "retune") && iteration == at) return line;
  }
  return {};
}

TEST(TuneSummary, TheColumnsReadAsItHappenedMeasuredThenItsEstimateThenTheSettingHeldNext) {
  const std::string text = tune_summary(result());
  std::string header;
  for (const auto& line : lines(text))
    if (line.find("decision") != std::string::npos && line.find("reason") != std::string::npos) header = line;
  ASSERT_FALSE(header.empty()) << text;
  std::size_t last = 0;
  for (const char* column :
       {"decision", "iteration", "measured", "estimate", "interval", "iterations", "then holds", "reason"}) {
    const std::size_t at = header.find(column, last);
    ASSERT_NE(at, std::string::npos) << column << " in " << header;
    last = at + 1;
  }
  EXPECT_EQ(header.find("over"), std::string::npos) << header;
}

TEST(TuneSummary, AStartAgainRowShowsTheCandidateItsEstimateIsOfNotTheStartValueJustLeft) {
  const std::string text = tune_summary(result());
  const std::string row = row_at(text, "271");
  ASSERT_FALSE(row.empty()) << text;
  // measured 160 W, its estimate, then 155 W held next; the start value (300 W) appears only in the reason.
  const std::size_t measured = row.find("160 W");
  const std::size_t estimate = row.find("0.711");
  const std::size_t held = row.find("155 W");
  const std::size_t reason = row.find("start 300 W again");
  ASSERT_NE(measured, std::string::npos) << row;
  ASSERT_NE(held, std::string::npos) << row;
  EXPECT_LT(measured, estimate) << row;
  EXPECT_LT(estimate, held) << row;
  EXPECT_LT(held, reason) << row;
  EXPECT_EQ(row.find("300 W"), reason + 6) << row;
  // The first row: the baseline's estimate is of the start value, and 205 W is held next.
  const std::string first = row_at(text, "182");
  EXPECT_LT(first.find("300 W"), first.find("1.000")) << first;
  EXPECT_LT(first.find("1.000"), first.find("205 W")) << first;
}

TEST(TuneSummary, ADryRunSaysWhatTheIterationsWereTakenForAndWhatItWouldHold) {
  LiveTuningResult r = result();
  r.dry_run = true;
  const std::string text = tune_summary(r);
  EXPECT_NE(text.find("measured as"), std::string::npos) << text;
  EXPECT_NE(text.find("then would hold"), std::string::npos) << text;
}

TEST(DecisionLine, NamesTheSettingItsEstimateIsOf) {
  const std::string line = decision_line(TuneKnob::kPowerLimit, result().decisions[2], false, true);
  EXPECT_EQ(
      line.rfind("probe: sets power limit 155 W (iteration 271; estimate of 160 W: 0.711 [0.696, 0.727]", 0),
      0u)
      << line;
  const std::string clock = decision_line(
      TuneKnob::kSmClock, decision(DecisionKind::kProbe, 1200, 40, 1410, 1.0, 0.99, 1.01, 5, ""), true, true);
  EXPECT_NE(clock.find("would set SM clock 1200 MHz (iteration 40; estimate of 1410 MHz: 1.000"),
            std::string::npos)
      << clock;
}

TEST(DecisionJson, AddsEstimateOfAndKeepsEveryField) {
  const auto j = decision_json(TuneKnob::kPowerLimit, result().decisions[2]);
  EXPECT_EQ(j.at("estimate_of").get<double>(), 160);
  EXPECT_EQ(j.at("power_limit_w").get<double>(), 155);
  EXPECT_EQ(j.at("kind"), "probe");
  EXPECT_EQ(j.at("at_iteration").get<int>(), 271);
  EXPECT_DOUBLE_EQ(j.at("estimate").get<double>(), 0.711);
  EXPECT_DOUBLE_EQ(j.at("interval_low").get<double>(), 0.696);
  EXPECT_DOUBLE_EQ(j.at("interval_high").get<double>(), 0.727);
  EXPECT_EQ(j.at("iterations").get<int>(), 11);
  EXPECT_EQ(j.at("reason"), result().decisions[2].reason);
  EXPECT_EQ(j.size(), 9u);
  const auto all = tune_json(result());
  ASSERT_EQ(all.at("decisions").size(), 4u);
  EXPECT_EQ(all.at("decisions")[0].at("estimate_of").get<double>(), 300);
}

}  // namespace
}  // namespace wattwise::tune
