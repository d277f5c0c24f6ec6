#include <gtest/gtest.h>

#include <functional>

#include "analysis/reference.hpp"
#include "core/error.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

std::string usage_message(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "expected a usage_error";
  return "";
}

TEST(Reference, ParsesKnobValuePairs) {
  EXPECT_EQ(parse_setting_spec("power_limit_w=300"), (Setting{{"power_limit_w", 300}}));
  EXPECT_EQ(parse_setting_spec("power_limit_w=250, batch=64"),
            (Setting{{"batch", 64}, {"power_limit_w", 250}}));
  EXPECT_THROW(parse_setting_spec("power_limit_w"), Error);
  EXPECT_THROW(parse_setting_spec("power_limit_w=high"), Error);
  EXPECT_THROW(parse_setting_spec("=3"), Error);
}

TEST(Reference, DefaultIsTheHighestPowerLimit) {
  const auto settings = aggregate_runs({run_at(150, 1, 1), run_at(300, 1, 1), run_at(250, 1, 1)});
  EXPECT_DOUBLE_EQ(
      settings[choose_reference(settings, std::nullopt, std::nullopt)].setting.at("power_limit_w"), 300);
}

TEST(Reference, NamedReferenceWinsOverTheDefault) {
  const auto settings = aggregate_runs({run_at(150, 1, 1), run_at(300, 1, 1), run_at(250, 1, 1)});
  const Setting named{{"power_limit_w", 250}};
  const Setting default_setting{{"power_limit_w", 150}};
  EXPECT_DOUBLE_EQ(settings[choose_reference(settings, named, default_setting)].setting.at("power_limit_w"),
                   250);
  EXPECT_DOUBLE_EQ(
      settings[choose_reference(settings, std::nullopt, default_setting)].setting.at("power_limit_w"), 150);
}

TEST(Reference, MissingReferenceListsTheAvailableValues) {
  const auto settings = aggregate_runs({run_at(150, 1, 1), run_at(300, 1, 1)});
  const std::string message = usage_message([&] { find_reference(settings, {{"power_limit_w", 250}}); });
  EXPECT_NE(message.find("150, 300"), std::string::npos) << message;
  const std::string unknown = usage_message([&] { find_reference(settings, {{"sm_clock_mhz", 1200}}); });
  EXPECT_NE(unknown.find("power_limit_w"), std::string::npos) << unknown;
}

TEST(Reference, AmbiguousReferenceAsksForMoreKnobs) {
  RunRecord a = run_at(300, 1, 1);
  RunRecord b = run_at(300, 1, 1);
  a.setting["batch"] = 64;
  b.setting["batch"] = 128;
  const auto settings = aggregate_runs({a, b});
  const std::string message = usage_message([&] { find_reference(settings, {{"power_limit_w", 300}}); });
  EXPECT_NE(message.find("batch=128"), std::string::npos) << message;
}

TEST(Reference, WithoutPowerLimitKnobTheUserMustName) {
  RunRecord a = run_at(300, 1, 1);
  RunRecord b = run_at(300, 1, 1);
  a.setting = {{"batch", 64}};
  b.setting = {{"batch", 128}};
  const auto settings = aggregate_runs({a, b});
  const std::string message = usage_message([&] { choose_reference(settings, std::nullopt, std::nullopt); });
  EXPECT_NE(message.find("--reference"), std::string::npos) << message;
}

TEST(Reference, ClockOnlyDataDefaultsToTheHighestClock) {
  RunRecord a = run_at(300, 1, 1), b = run_at(300, 1, 1), c = run_at(300, 1, 1);
  a.setting = {{"sm_clock_mhz", 1005}};
  b.setting = {{"sm_clock_mhz", 1410}};
  c.setting = {{"sm_clock_mhz", 1200}};
  const auto settings = aggregate_runs({a, b, c});
  EXPECT_DOUBLE_EQ(
      settings[choose_reference(settings, std::nullopt, std::nullopt)].setting.at("sm_clock_mhz"), 1410);
}

TEST(Reference, PowerLimitAndClockDataDefaultsToTheHighestOfEach) {
  std::vector<RunRecord> runs;
  for (double limit : {200.0, 300.0})
    for (double clock : {1005.0, 1410.0}) {
      RunRecord r = run_at(limit, 1, 1);
      r.setting["sm_clock_mhz"] = clock;
      runs.push_back(r);
    }
  const auto settings = aggregate_runs(runs);
  const auto& chosen = settings[choose_reference(settings, std::nullopt, std::nullopt)].setting;
  EXPECT_EQ(chosen, (Setting{{"power_limit_w", 300}, {"sm_clock_mhz", 1410}}));
}

}  // namespace
}  // namespace wattwise::analysis
