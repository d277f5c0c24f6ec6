// `info` formats readings gathered before (hw::read_snapshot): a hand-made snapshot, no GPU behind it.
#include <gtest/gtest.h>

#include "report/info_live.hpp"
#include "report/info_report.hpp"

namespace wattwise::report {
namespace {

hw::SystemSnapshot two_gpus_one_unreadable() {
  hw::SystemSnapshot s{"nvml", "550.1", {}};
  hw::GpuSnapshot ok;
  ok.identity = {0, "GPU-aaa", "Tesla V100", "0000:01:00.0"};
  ok.now.power_w = 123.5;
  ok.now.telemetry.temp_c = 41;
  ok.power_limits = hw::PowerLimits{100, 300, 250, 200, 200};
  ok.capabilities.energy_counter = true;
  ok.capabilities.power_limit_set = true;
  ok.mem_clocks_mhz = {877, 810};
  ok.sm_clocks_mhz = {{810, {135}}, {877, {1530, 135}}};
  hw::GpuSnapshot lost;
  lost.identity = {1, "GPU-bbb", "Tesla V100", "0000:02:00.0"};
  lost.unreadable = "GPU 1 is lost";
  s.gpus = {ok, lost};
  return s;
}

TEST(InfoReport, TextShowsTheReadableGpuAndMarksTheUnreadableOne) {
  const std::string text = info_text(two_gpus_one_unreadable());
  EXPECT_NE(text.find("backend nvml  driver 550.1  GPUs 2"), std::string::npos) << text;
  EXPECT_NE(text.find("100 / 250 / 200 / 300 W"), std::string::npos) << text;
  EXPECT_NE(text.find("unreadable (the reason is on stderr)"), std::string::npos) << text;
  // The memory clocks in the driver's order, each with its SM clocks.
  EXPECT_LT(text.find("SM clocks at 877 MHz memory: 2 values, 135..1530 MHz"),
            text.find("SM clocks at 810 MHz memory: 1 values"))
      << text;
  EXPECT_NE(text.find("123.5 W"), std::string::npos) << text;
}

TEST(InfoReport, JsonGivesTheUnreadableGpuItsErrorOnly) {
  const auto j = info_json(two_gpus_one_unreadable());
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["power_limit_w"]["current"], 200);
  EXPECT_EQ(j["gpus"][0]["now"]["power_w"], 123.5);
  EXPECT_EQ(j["gpus"][0]["supported_sm_clocks_mhz_by_mem_clock"]["877"].size(), 2u);
  EXPECT_EQ(j["gpus"][1], (nlohmann::json{{"index", 1}, {"error", "GPU 1 is lost"}}));
}

TEST(InfoReport, CsvHasARowPerGpuWithAbsentReadingsEmpty) {
  const std::string csv = info_csv(two_gpus_one_unreadable());
  EXPECT_NE(csv.find("\n0,GPU-aaa,Tesla V100,0000:01:00.0,123.5,,41,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,GPU-bbb,Tesla V100,0000:02:00.0,,,,,,,,,,,,,\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace wattwise::report
