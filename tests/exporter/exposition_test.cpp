#include "exporter/exposition.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace wattwise::exporter {
namespace {

TEST(Exposition, EscapesBackslashQuoteAndNewlineInLabelValues) {
  EXPECT_EQ(escape_label_value(R"(a\b"c)"
                               "\nd"),
            R"(a\\b\"c\nd)");
  EXPECT_EQ(escape_label_value("plain GPU-1 ü"), "plain GPU-1 ü");
}

TEST(Exposition, EscapesBackslashAndNewlineButNotQuotesInHelp) {
  EXPECT_EQ(escape_help("one\\two\n\"three\""), "one\\\\two\\n\"three\"");
}

TEST(Exposition, WritesHelpThenTypeThenOneLinePerSample) {
  const std::vector<MetricFamily> families = {
      {"x_energy_joules_total",
       "Energy.",
       MetricType::kCounter,
       {{{{"gpu", "0"}, {"UUID", "GPU-a"}}, 1.5}, {{{"gpu", "1"}, {"UUID", "GPU-b"}}, 2}}},
      {"x_power_watts", "Power.", MetricType::kGauge, {{{}, 300}}}};
  EXPECT_EQ(render(families),
            "# HELP x_energy_joules_total Energy.\n"
            "# TYPE x_energy_joules_total counter\n"
            "x_energy_joules_total{gpu=\"0\",UUID=\"GPU-a\"} 1.5\n"
            "x_energy_joules_total{gpu=\"1\",UUID=\"GPU-b\"} 2\n"
            "# HELP x_power_watts Power.\n"
            "# TYPE x_power_watts gauge\n"
            "x_power_watts 300\n");
}

TEST(Exposition, EscapesHostileLabelValuesInTheRenderedLine) {
  const std::vector<MetricFamily> families = {
      {"x_jobs_total", "Jobs.", MetricType::kCounter, {{{{"job_id", "a\"} 1\nevil_total 9"}}, 1}}}};
  EXPECT_EQ(render(families),
            "# HELP x_jobs_total Jobs.\n# TYPE x_jobs_total counter\n"
            "x_jobs_total{job_id=\"a\\\"} 1\\nevil_total 9\"} 1\n");
}

// Issue 22, item 3: Prometheus refuses the node's whole scrape for one label value that is not UTF-8.
TEST(Exposition, HostileLabelBytesBecomeValidUtf8) {
  const std::vector<MetricFamily> families = {
      {"x_jobs_total", "Jobs \xff.", MetricType::kCounter, {{{{"job_id", "a\xff\xc3"}}, 1}}}};
  EXPECT_EQ(render(families),
            "# HELP x_jobs_total Jobs \xef\xbf\xbd.\n# TYPE x_jobs_total counter\n"
            "x_jobs_total{job_id=\"a\xef\xbf\xbd\xef\xbf\xbd\"} 1\n");
}

TEST(Exposition, LeavesOutFamiliesWithoutSamples) {
  EXPECT_EQ(render({{"x_power_watts", "Power.", MetricType::kGauge, {}}}), "");
}

TEST(Exposition, RejectsCounterNotEndingInTotal) {
  EXPECT_THROW(render({{"x_energy_joules", "Energy.", MetricType::kCounter, {{{}, 1}}}}), Error);
}

TEST(Exposition, RejectsInvalidMetricAndLabelNames) {
  EXPECT_THROW(render({{"1x", "h", MetricType::kGauge, {{{}, 1}}}}), Error);
  EXPECT_THROW(render({{"x-y", "h", MetricType::kGauge, {{{}, 1}}}}), Error);
  EXPECT_THROW(render({{"x", "h", MetricType::kGauge, {{{{"a:b", "v"}}, 1}}}}), Error);
  EXPECT_THROW(render({{"x", "h", MetricType::kGauge, {{{{"__name__", "v"}}, 1}}}}), Error);
}

TEST(Exposition, FormatsValuesSoPrometheusParsesThemBack) {
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(1980000000), "1980000000");
  // Shortest round trip: a large energy total keeps every digit it has.
  const double total_j = 123456789.123456;
  EXPECT_EQ(std::stod(format_value(total_j)), total_j);
}

}  // namespace
}  // namespace wattwise::exporter
