#include <gtest/gtest.h>

#include <cmath>

#include "analysis/aggregate.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

TEST(Aggregate, GroupsRepeatsBySettingInSettingOrder) {
  std::vector<RunRecord> runs = {run_at(300, 100, 10), run_at(150, 60, 12), run_at(300, 110, 11),
                                 run_at(150, 64, 13)};
  runs[1].label = "capped";
  runs[3].label = "capped";
  const auto settings = aggregate_runs(runs);
  ASSERT_EQ(settings.size(), 2u);
  EXPECT_DOUBLE_EQ(settings[0].setting.at("power_limit_w"), 150);
  EXPECT_EQ(settings[0].energy_j.n, 2);
  EXPECT_DOUBLE_EQ(settings[0].energy_j.mean, 62);
  EXPECT_NEAR(*settings[0].energy_j.stddev, std::sqrt(8.0), 1e-12);
  EXPECT_DOUBLE_EQ(settings[0].time_s.mean, 12.5);
  EXPECT_DOUBLE_EQ(settings[0].power_w.mean, (60.0 / 12 + 64.0 / 13) / 2);
  EXPECT_EQ(settings[0].labels, std::vector<std::string>{"capped"});
  EXPECT_DOUBLE_EQ(settings[1].energy_j.mean, 105);
}

TEST(Aggregate, FailedRunsAreLeftOut) {
  std::vector<RunRecord> runs = {run_at(300, 100, 10), run_at(300, 900, 90)};
  runs[1].ok = false;
  const auto settings = aggregate_runs(runs);
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_EQ(settings[0].energy_j.n, 1);
  EXPECT_DOUBLE_EQ(settings[0].energy_j.mean, 100);
}

TEST(Aggregate, ValuesEqualToRoundingAreOneSetting) {
  const auto settings = aggregate_runs({run_at(150, 60, 12), run_at(150.0 + 1e-12, 62, 12)});
  ASSERT_EQ(settings.size(), 1u);
  EXPECT_EQ(settings[0].energy_j.n, 2);
}

TEST(Aggregate, WorkAndFlopsGiveEnergyPerSampleAndGflopsPerWatt) {
  RunRecord run = run_at(300, 2000, 10);
  run.work = 1000;
  run.flops = 4e12;
  const auto settings = aggregate_runs({run, run_at(300, 2000, 10)});
  ASSERT_TRUE(settings[0].j_per_sample.has_value());
  EXPECT_EQ(settings[0].j_per_sample->n, 1);  // only the run that reported work
  EXPECT_DOUBLE_EQ(settings[0].j_per_sample->mean, 2.0);
  ASSERT_TRUE(settings[0].gflops_per_w.has_value());
  EXPECT_DOUBLE_EQ(settings[0].gflops_per_w->mean, 2.0);  // 4e12 flop / 2000 J = 2 GFLOP/J
}

TEST(Aggregate, NoWorkMeansNoEnergyPerSample) {
  const auto settings = aggregate_runs({run_at(300, 2000, 10)});
  EXPECT_FALSE(settings[0].j_per_sample.has_value());
  EXPECT_FALSE(settings[0].gflops_per_w.has_value());
}

}  // namespace
}  // namespace wattwise::analysis
