// The checks of a whole plan that `sweep` runs before anything runs or any setting changes.
#include "plan/validate.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

plan::PlanSpec batch_and_limit_spec() {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("150,300"));
  spec.knobs.push_back(plan::parse_job_knob("batch=64,128"));
  return spec;
}

// The usage_error's message, or a failure when `action` throws nothing or another kind.
std::string usage_message(auto&& action) {
  try {
    action();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected a usage_error";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PlanValidate, UnknownPlaceholderIsRefusedNamingTheKnobsAndTheEscape) {
  const auto spec = batch_and_limit_spec();
  const auto message = usage_message([&] {
    plan::check_placeholders({"train.py", "--bs={bs}"}, spec, "the command");
  });
  EXPECT_TRUE(contains(message, "{bs}")) << message;
  EXPECT_TRUE(contains(message, "knobs: power_limit_w, batch")) << message;
  EXPECT_TRUE(contains(message, "{{bs}}")) << message;
  EXPECT_TRUE(contains(usage_message([&] { plan::check_placeholders({"{gpus}"}, {}, "--job-gpus"); }),
                       "--param gpus="));
}

TEST(PlanValidate, KnownPlaceholdersEscapesShellVariablesAndOtherBracesPass) {
  const auto spec = batch_and_limit_spec();
  EXPECT_NO_THROW(plan::check_placeholders(
      {"--batch={batch}", "{power_limit_w}W", "{{bs}}", "${HOME}", "{\"a\": 1}", "{}", "{0}", "{ x }"}, spec,
      "the command"));
}

TEST(PlanValidate, WordValuedJobKnobsAreRefusedUpFront) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_job_knob("model=resnet50,bert"));
  const auto message = usage_message([&] { plan::check_numeric_job_knobs(spec); });
  EXPECT_TRUE(contains(message, "model")) << message;
  EXPECT_TRUE(contains(message, "resnet50")) << message;
  EXPECT_NO_THROW(plan::check_numeric_job_knobs(batch_and_limit_spec()));
}

TEST(PlanValidate, ReferenceMustBeOneSettingOfThePlan) {
  const auto spec = batch_and_limit_spec();
  EXPECT_NO_THROW(plan::check_reference({{"power_limit_w", 300}, {"batch", 64}}, spec));
  EXPECT_TRUE(contains(usage_message([&] {
                         plan::check_reference({{"power_limit_w", 999}, {"batch", 64}}, spec);
                       }),
                       "150, 300"));
  EXPECT_TRUE(contains(usage_message([&] {
                         plan::check_reference({{"lr", 1}, {"batch", 64}}, spec);
                       }),
                       "lr"));
  EXPECT_TRUE(contains(usage_message([&] {
                         plan::check_reference({{"power_limit_w", 300}}, spec);
                       }),
                       "leaves batch open"));
}

TEST(PlanValidate, ClocksOutsideTheGpuRangeAreRefused) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_clock_knob(plan::kSmClockKnob, "1410,5000"));
  const auto plan = plan::make_plan(spec);
  const plan::SupportedClocks gpu{"GPU 0 (GPU-x)", {2619, 1593}, {345, 1410, 1980}};
  const auto message = usage_message([&] { plan::check_clocks(plan, gpu); });
  EXPECT_TRUE(contains(message, "5000")) << message;
  EXPECT_TRUE(contains(message, "345-1980")) << message;
  EXPECT_TRUE(contains(message, "GPU-x")) << message;
  // Inside the range the driver picks the nearest supported clock; a GPU without a list is not checked here.
  plan::PlanSpec inside;
  inside.knobs.push_back(plan::parse_clock_knob(plan::kSmClockKnob, "1000:1980:90"));
  EXPECT_NO_THROW(plan::check_clocks(plan::make_plan(inside), gpu));
  EXPECT_NO_THROW(plan::check_clocks(plan, plan::SupportedClocks{"GPU 1", {}, {}}));
}

TEST(PlanValidate, AHugePlanIsAUsageErrorNotAnAllocationFailure) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_job_knob("a=1:1000:1"));
  spec.knobs.push_back(plan::parse_job_knob("b=1:1000:1"));
  EXPECT_TRUE(contains(usage_message([&] { plan::make_plan(spec); }), "1000000 runs"));
  plan::PlanSpec warmups;
  warmups.warmup_runs = 4'000'000'000u;
  EXPECT_TRUE(contains(usage_message([&] { plan::make_plan(warmups); }), "runs"));
}

TEST(PlanValidate, ClockValuesAnUnsignedCannotHoldAreRefusedBeforeTheCast) {
  EXPECT_TRUE(contains(usage_message([] { plan::parse_clock_knob(plan::kSmClockKnob, "1e20"); }), "1e20"));
  plan::PlanSpec spec;  // a knob built by hand, past the parser
  spec.knobs.push_back({std::string(plan::kMemClockKnob), plan::KnobKind::kHardware, {"1e20"}, false});
  EXPECT_TRUE(contains(usage_message([&] { plan::make_plan(spec); }), "mem_clock_mhz"));
  EXPECT_TRUE(contains(usage_message([] { plan::parse_power_limit_knob("1e300"); }), "--power-limit"));
}

}  // namespace
}  // namespace wattwise::experiment
