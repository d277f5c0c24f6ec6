#include <gtest/gtest.h>

#include "analysis/metrics.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

const ReferencePoint kRef{100.0, 100.0};

double value_of(const MetricSpec& metric) {
  return metric_value(metric, 80.0, 110.0, kRef);
}

TEST(Metrics, HandCheckedValuesAt80PercentEnergyAnd110PercentTime) {
  EXPECT_DOUBLE_EQ(value_of({MetricKind::kEnergy}), 0.8);
  EXPECT_DOUBLE_EQ(value_of({MetricKind::kTime}), 1.1);
  EXPECT_DOUBLE_EQ(value_of({MetricKind::kEdp}), 0.88);
  EXPECT_DOUBLE_EQ(value_of({MetricKind::kEd2p}), 0.968);
  EXPECT_DOUBLE_EQ(value_of({MetricKind::kEds, 2.0}), 0.5 * 0.8 + 0.5 * 1.1);
  EXPECT_NEAR(value_of({MetricKind::kEds, 1.5}), 0.8 / 3 + 1.1 * 2 / 3, 1e-15);
  EXPECT_NEAR(value_of({MetricKind::kGainLoss}), 20.0 - 10.0, 1e-12);
}

TEST(Metrics, EdsOfTheReferenceIsOne) {
  for (double k : {1.25, 1.5, 2.0, 3.0}) {
    EXPECT_DOUBLE_EQ(metric_value({MetricKind::kEds, k}, 100.0, 100.0, kRef), 1.0) << k;
  }
}

TEST(Metrics, EdsUsesAbsoluteReferenceValues) {
  // alpha = (k-1)/(k E_ref), beta = 1/(k t_ref) with E_ref = 7206 J, t_ref = 39.7 s (alexnet, V100 default).
  const ReferencePoint ref{7206, 39.7};
  const double expected = (2.0 - 1) / (2.0 * 7206) * 5603 + 1 / (2.0 * 39.7) * 43.9;
  EXPECT_NEAR(metric_value({MetricKind::kEds, 2.0}, 5603, 43.9, ref), expected, 1e-15);
}

TEST(Metrics, NamesFollowTheJsonContract) {
  EXPECT_EQ(MetricSpec{MetricKind::kEnergy}.name(), "E");
  EXPECT_EQ(MetricSpec{MetricKind::kEdp}.name(), "EDP");
  EXPECT_EQ(MetricSpec{MetricKind::kEd2p}.name(), "ED2P");
  EXPECT_EQ((MetricSpec{MetricKind::kEds, 2.0}.name()), "EDS(k=2.0)");
  EXPECT_EQ((MetricSpec{MetricKind::kEds, 1.5}.name()), "EDS(k=1.5)");
  EXPECT_EQ((MetricSpec{MetricKind::kEds, 1.25}.name()), "EDS(k=1.25)");
  EXPECT_EQ(MetricSpec{MetricKind::kGainLoss}.name(), "gain-loss");
  EXPECT_EQ(MetricSpec{MetricKind::kTime}.name(), "time");
}

TEST(Metrics, ParsesCommandLineNames) {
  EXPECT_EQ(parse_metric("E"), MetricSpec{MetricKind::kEnergy});
  EXPECT_EQ(parse_metric("edp"), MetricSpec{MetricKind::kEdp});
  EXPECT_EQ(parse_metric("ED2P"), MetricSpec{MetricKind::kEd2p});
  EXPECT_EQ(parse_metric("eds:1.5"), (MetricSpec{MetricKind::kEds, 1.5}));
  EXPECT_EQ(parse_metric("EDS(k=2.0)"), (MetricSpec{MetricKind::kEds, 2.0}));
  EXPECT_EQ(parse_metric("gain-loss"), MetricSpec{MetricKind::kGainLoss});
  EXPECT_EQ(parse_metric("time"), MetricSpec{MetricKind::kTime});
}

TEST(Metrics, RejectsUnknownNamesAndBadK) {
  EXPECT_THROW(parse_metric("speed"), Error);
  EXPECT_THROW(parse_metric("eds:1"), Error);
  EXPECT_THROW(parse_metric("eds:abc"), Error);
  try {
    parse_metric("speed");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("gain-loss"), std::string::npos) << e.what();
  }
}

TEST(Metrics, ExtraEdsIsAddedOnceAfterTheDefaults) {
  const auto metrics = metrics_with({"eds:3", "eds:2.0", "edp"});
  ASSERT_EQ(metrics.size(), default_metrics().size() + 1);
  EXPECT_EQ(metrics.back().name(), "EDS(k=3.0)");
}

TEST(Metrics, ParsesMaxSlowdownAsPercent) {
  EXPECT_DOUBLE_EQ(parse_max_slowdown("10%"), 0.10);
  EXPECT_DOUBLE_EQ(parse_max_slowdown("5"), 0.05);
  EXPECT_THROW(parse_max_slowdown("-3%"), Error);
  EXPECT_THROW(parse_max_slowdown("ten"), Error);
  // Issue 22: "0.1" meant 0.1% silently; a fraction or a percentage? It is refused, saying how to write each.
  try {
    parse_max_slowdown("0.1");
    ADD_FAILURE() << "0.1 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("10%"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0.1%"), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(parse_max_slowdown("0.1%"), 0.001);
  EXPECT_DOUBLE_EQ(parse_max_slowdown("0"), 0.0);
  EXPECT_FALSE(parse_max_slowdown_flag("none").has_value());
  EXPECT_DOUBLE_EQ(*parse_max_slowdown_flag("10%"), 0.10);
}

}  // namespace
}  // namespace wattwise::analysis
