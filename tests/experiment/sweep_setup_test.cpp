// What a sweep sets up before its first run (experiment/sweep_setup.hpp): the analysis's default reference.
#include "experiment/sweep_setup.hpp"

#include <gtest/gtest.h>

#include "../support/fake_gpu.hpp"
#include "plan/knob.hpp"

namespace wattwise::experiment {
namespace {

plan::PlanSpec spec_of(const std::vector<plan::Knob>& knobs) {
  plan::PlanSpec spec;
  spec.knobs = knobs;
  return spec;
}

TEST(DefaultReference, TheGpusDefaultPowerLimitWhenTheSweepRunsItWithEachJobKnobsFirstValue) {
  testing::FakeGpu gpu(0, "GPU-aaa", 300);  // its default limit is 700 W
  const auto reference = default_reference(
      spec_of({plan::parse_power_limit_knob("300:700:200"), plan::parse_job_knob("batch=128,64,256")}), gpu);
  ASSERT_TRUE(reference);
  EXPECT_EQ(*reference, (analysis::Setting{{"power_limit_w", 700.0}, {"batch", 128.0}}));
}

TEST(DefaultReference, NoneWhenTheDefaultIsNotSweptOrAClockOrATextKnobIs) {
  testing::FakeGpu gpu(0, "GPU-aaa", 300);
  EXPECT_FALSE(default_reference(spec_of({plan::parse_power_limit_knob("300,500")}), gpu));
  EXPECT_FALSE(default_reference(spec_of({plan::parse_clock_knob(plan::kSmClockKnob, "1410,1980")}), gpu));
  EXPECT_FALSE(default_reference(spec_of({plan::parse_job_knob("model=resnet,vit")}), gpu));
  EXPECT_FALSE(default_reference(spec_of({}), gpu));
}

}  // namespace
}  // namespace wattwise::experiment
