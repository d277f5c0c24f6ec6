#include "plan/knob.hpp"

#include <gtest/gtest.h>

#include "../support/error_kind.hpp"
#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

using Values = std::vector<std::string>;

using wattwise::testing::kind_of_failure;

TEST(Knob, PowerLimitRangeIsInclusive) {
  plan::Knob knob = plan::parse_power_limit_knob("150:170:5");
  EXPECT_EQ(knob.name, "power_limit_w");
  EXPECT_EQ(knob.kind, plan::KnobKind::kHardware);
  EXPECT_EQ(knob.values, (Values{"150", "155", "160", "165", "170"}));
}

TEST(Knob, PowerLimitRangeWithFractionalStepDoesNotDrift) {
  plan::Knob knob = plan::parse_power_limit_knob("100:100.3:0.1");
  EXPECT_EQ(knob.values, (Values{"100", "100.1", "100.2", "100.3"}));
}

TEST(Knob, PowerLimitList) {
  EXPECT_EQ(plan::parse_power_limit_knob("150,200,250").values, (Values{"150", "200", "250"}));
}

TEST(Knob, BadPowerLimitSyntaxIsAUsageErrorWithAnExample) {
  for (const char* spec : {"150:300", "150:300:0", "300:150:5", "abc", "150,,200", "", "-5,100"}) {
    try {
      plan::parse_power_limit_knob(spec);
      ADD_FAILURE() << "accepted " << spec;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage) << spec;
      EXPECT_NE(std::string(e.what()).find("150:300:5"), std::string::npos) << e.what();
    }
  }
}

TEST(Knob, ClockAcceptsSupportedAndResolvesAgainstTheGpuList) {
  plan::Knob knob = plan::parse_clock_knob(plan::kSmClockKnob, "supported");
  EXPECT_TRUE(knob.from_supported_clocks);
  plan::Knob resolved = plan::resolve_supported_clocks(knob, {1980, 1410, 1410, 210});
  EXPECT_FALSE(resolved.from_supported_clocks);
  EXPECT_EQ(resolved.values, (Values{"210", "1410", "1980"}));
}

TEST(Knob, ResolvingSupportedWithoutClocksIsAnEnvironmentError) {
  EXPECT_EQ(kind_of_failure([] {
              plan::resolve_supported_clocks(plan::parse_clock_knob(plan::kMemClockKnob, "supported"), {});
            }),
            ErrorKind::kEnvironment);
}

TEST(Knob, ClockRejectsFractionalMhz) {
  EXPECT_EQ(kind_of_failure([] { plan::parse_clock_knob(plan::kSmClockKnob, "1410.5"); }), ErrorKind::kUsage);
  EXPECT_EQ(plan::parse_clock_knob(plan::kMemClockKnob, "1000:1200:100").values,
            (Values{"1000", "1100", "1200"}));
}

TEST(Knob, JobKnobListKeepsWords) {
  plan::Knob knob = plan::parse_job_knob("model=resnet50,bert");
  EXPECT_EQ(knob.name, "model");
  EXPECT_EQ(knob.kind, plan::KnobKind::kJob);
  EXPECT_EQ(knob.values, (Values{"resnet50", "bert"}));
  EXPECT_EQ(plan::parse_job_knob("batch=32:96:32").values, (Values{"32", "64", "96"}));
  EXPECT_EQ(plan::parse_job_knob("name=caf\xc3\xa9").values, (Values{"caf\xc3\xa9"}));
}

TEST(Knob, BadJobKnobsAreUsageErrors) {
  for (const char* spec : {"batch", "=1,2", "9x=1", "batch=1,,2", "batch=1,1", "power_limit_w=100", "b-s=1",
                           "m=a\x1b[2J", "m=\xff\xfe", "m=\xc3", "m=a\nb"}) {
    EXPECT_EQ(kind_of_failure([&] { plan::parse_job_knob(spec); }), ErrorKind::kUsage) << spec;
  }
}

TEST(KnobValueNumber, IsTheOneReadingOfKnobValuesForPlanAnalysisAndReport) {
  EXPECT_EQ(plan::knob_value_number("128"), 128.0);
  EXPECT_EQ(plan::knob_value_number("232.5"), 232.5);
  // The report once drew "128x" at 128 where analyze refused it: now neither takes it for a number.
  EXPECT_EQ(plan::knob_value_number("128x"), std::nullopt);
  EXPECT_EQ(plan::knob_value_number("resnet50"), std::nullopt);
  EXPECT_EQ(plan::knob_value_number("nan"), std::nullopt);
  EXPECT_EQ(kind_of_failure([] { plan::knob_number("batch", "128x"); }), ErrorKind::kUsage);
}

}  // namespace
}  // namespace wattwise::experiment
