#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"

namespace wattwise::experiment {
namespace {

plan::PlanSpec two_knob_spec() {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("300,150,200"));
  spec.knobs.push_back(plan::parse_job_knob("batch=128,64"));
  spec.repeats = 2;
  return spec;
}

std::vector<std::string> labels(const plan::Plan& plan) {
  std::vector<std::string> out;
  for (const auto& run : plan.runs) {
    std::string label = run.warmup ? "w" : "";
    for (const auto& s : run.settings) label += s.value + "/";
    out.push_back(label + std::to_string(run.repeat));
  }
  return out;
}

TEST(Plan, IsTheProductOfValuesTimesRepeatsAscendingAndInterleaved) {
  plan::Plan plan = plan::make_plan(two_knob_spec());
  EXPECT_EQ(labels(plan), (std::vector<std::string>{"150/64/0", "150/128/0", "200/64/0", "200/128/0",
                                                    "300/64/0", "300/128/0", "150/64/1", "150/128/1",
                                                    "200/64/1", "200/128/1", "300/64/1", "300/128/1"}));
  for (std::size_t i = 0; i < plan.runs.size(); ++i) EXPECT_EQ(plan.runs[i].index, i);
}

TEST(Plan, DescendingReversesTheSettings) {
  plan::PlanSpec spec = two_knob_spec();
  spec.order = plan::RunOrder::kDescending;
  spec.repeats = 1;
  EXPECT_EQ(labels(plan::make_plan(spec)), (std::vector<std::string>{"300/128/0", "300/64/0", "200/128/0",
                                                                     "200/64/0", "150/128/0", "150/64/0"}));
}

TEST(Plan, RandomOrderIsAPermutationFixedByTheSeed) {
  plan::PlanSpec spec = two_knob_spec();
  spec.order = plan::RunOrder::kRandom;
  spec.seed = 42;
  const auto first = labels(plan::make_plan(spec));
  EXPECT_EQ(first, labels(plan::make_plan(spec)));
  auto ascending = labels(plan::make_plan(two_knob_spec()));
  EXPECT_NE(first, ascending);
  auto sorted_first = first;
  std::sort(sorted_first.begin(), sorted_first.end());
  std::sort(ascending.begin(), ascending.end());
  EXPECT_EQ(sorted_first, ascending);
  spec.seed = 43;
  EXPECT_NE(first, labels(plan::make_plan(spec)));
}

TEST(Plan, SeededShuffleGivesThePlatformIndependentOrder) {
  // Pinned: this order must never change between platforms or releases, or resume would break.
  std::vector<int> items{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  plan::seeded_shuffle(items, 1);
  EXPECT_EQ(items, (std::vector<int>{1, 7, 3, 9, 4, 0, 5, 2, 6, 8}));
}

TEST(Plan, WarmupsComeFirstFlaggedWithTheFirstSettings) {
  plan::PlanSpec spec = two_knob_spec();
  spec.warmup_runs = 2;
  plan::Plan plan = plan::make_plan(spec);
  ASSERT_EQ(plan.runs.size(), 14u);
  EXPECT_TRUE(plan.runs[0].warmup);
  EXPECT_TRUE(plan.runs[1].warmup);
  EXPECT_FALSE(plan.runs[2].warmup);
  EXPECT_EQ(plan.runs[0].settings, plan.runs[2].settings);
  EXPECT_EQ(plan.runs[2].index, 2u);
}

TEST(Plan, HardwareSettingsAndParamsAreFilled) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("232.5"));
  spec.knobs.push_back(plan::parse_clock_knob(plan::kSmClockKnob, "1410"));
  spec.knobs.push_back(plan::parse_job_knob("batch=64"));
  plan::Plan plan = plan::make_plan(spec);
  ASSERT_EQ(plan.runs.size(), 1u);
  EXPECT_EQ(plan.runs[0].hardware.power_limit_w, 232.5);
  EXPECT_EQ(plan.runs[0].hardware.sm_clock_mhz, 1410u);
  EXPECT_FALSE(plan.runs[0].hardware.mem_clock_mhz);
  EXPECT_EQ(plan.runs[0].params.at("batch"), "64");
}

TEST(Plan, RejectsZeroRepeatsDuplicateKnobsAndUnresolvedClocks) {
  plan::PlanSpec spec = two_knob_spec();
  spec.repeats = 0;
  EXPECT_THROW(plan::make_plan(spec), Error);
  spec = two_knob_spec();
  spec.knobs.push_back(plan::parse_job_knob("batch=1"));
  EXPECT_THROW(plan::make_plan(spec), Error);
  spec = plan::PlanSpec{};
  spec.knobs.push_back(plan::parse_clock_knob(plan::kSmClockKnob, "supported"));
  EXPECT_THROW(plan::make_plan(spec), Error);
}

TEST(Plan, SpecJsonDiffersWhenAnythingDiffers) {
  plan::PlanSpec spec = two_knob_spec();
  auto json = plan::plan_spec_to_json(spec);
  EXPECT_EQ(json, plan::plan_spec_to_json(two_knob_spec()));
  spec.seed = 7;
  EXPECT_NE(json, plan::plan_spec_to_json(spec));
}

TEST(Plan, ResumeSkipsCompletedIndicesAndKeepsOrder) {
  plan::Plan plan = plan::make_plan(two_knob_spec());
  auto remaining = plan::runs_not_done(plan, {0, 2, 11});
  ASSERT_EQ(remaining.size(), 9u);
  EXPECT_EQ(remaining[0].index, 1u);
  EXPECT_EQ(remaining[1].index, 3u);
  EXPECT_EQ(remaining.back().index, 10u);
  EXPECT_EQ(plan::hardware_settings_of(plan).size(), 12u);
  EXPECT_EQ(plan::hardware_settings_of(plan)[0].power_limit_w, 150.0);
}

TEST(Substitution, ReplacesKnownPlaceholdersOnlyAndNeverSplitsArguments) {
  std::map<std::string, std::string> params{{"batch", "64"}, {"power_limit_w", "150"}};
  auto argv = plan::substitute_params(
      {"train.py", "--batch={batch}", "{batch}x{batch}", "{\"a\": {x}}", "; rm -rf {batch}"}, params);
  EXPECT_EQ(argv,
            (std::vector<std::string>{"train.py", "--batch=64", "64x64", "{\"a\": {x}}", "; rm -rf 64"}));
}

// {{name}} is how a job gets the literal text {name}; ${name} of a knob is still that knob's value.
TEST(Substitution, DoubledBracesAroundANameAreTheLiteralName) {
  std::map<std::string, std::string> params{{"batch", "64"}};
  auto argv =
      plan::substitute_params({"{{batch}}", "{{{batch}}}", "${batch}", "{{not a name}}", "{batch"}, params);
  EXPECT_EQ(argv, (std::vector<std::string>{"{batch}", "{{batch}}", "$64", "{{not a name}}", "{batch"}));
}

// A word that reads as nan must sort like a word: as a number it broke the sort's ordering.
TEST(Plan, NanValuedKnobSortsAsAWord) {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_job_knob("x=nan,2,NaN,1,b,a"));
  std::vector<std::string> order;
  for (const auto& run : plan::make_plan(spec).runs) order.push_back(run.params.at("x"));
  EXPECT_EQ(order, (std::vector<std::string>{"1", "2", "NaN", "a", "b", "nan"}));
}

TEST(Substitution, EnvironmentNamesAreUppercased) {
  auto env = plan::param_environment({{"batch", "64"}, {"lr_scale", "2"}});
  EXPECT_EQ(env, (std::vector<std::pair<std::string, std::string>>{{"WATTWISE_PARAM_BATCH", "64"},
                                                                   {"WATTWISE_PARAM_LR_SCALE", "2"}}));
}

}  // namespace
}  // namespace wattwise::experiment
