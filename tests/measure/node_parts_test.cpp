// The node sources over a phase's spans (measure::node_source_parts), for the node energy scope.
#include <gtest/gtest.h>

#include "measure/node_energy.hpp"

namespace wattwise::measure {
namespace {

using namespace std::chrono_literals;

// A cumulative counter rising at `watts` from t = 0 to 10 s, read every second.
sampling::NodeTrace counter(const std::string& name, hw::NodeKind kind, double watts) {
  sampling::NodeTrace trace;
  trace.name = name;
  trace.kind = kind;
  for (int s = 0; s <= 10; ++s)
    trace.samples.push_back({Nanos{std::chrono::seconds(s)}, watts * s, std::nullopt});
  return trace;
}

TEST(NodeParts, SourcesSummedByKindOverEverySpan) {
  const std::vector<sampling::NodeTrace> traces = {counter("package-0", hw::NodeKind::kCpuPackage, 50),
                                                   counter("package-1", hw::NodeKind::kCpuPackage, 30),
                                                   counter("core-0", hw::NodeKind::kCore, 20),
                                                   counter("dram-0", hw::NodeKind::kDram, 10)};
  const NodeParts parts = node_source_parts(traces, {{1s, 3s}, {5s, 6s}});
  EXPECT_DOUBLE_EQ(*parts.cpu_package_j, (50 + 30) * 3.0);  // the core lies inside a package: not added
  EXPECT_DOUBLE_EQ(*parts.dram_j, 10 * 3.0);
  EXPECT_FALSE(parts.meter_j);  // the node has none
  EXPECT_FALSE(parts.gpus_j);   // the GPUs are attribute_energy's
}

TEST(NodeParts, ASpanTheReadingsMissLeavesThatPartUnknown) {
  const std::vector<sampling::NodeTrace> traces = {counter("meter", hw::NodeKind::kMeter, 400)};
  EXPECT_DOUBLE_EQ(*node_source_parts(traces, {{2s, 4s}}).meter_j, 800);
  EXPECT_FALSE(node_source_parts(traces, {{2s, 4s}, {9s, 12s}}).meter_j);  // past the last reading
  EXPECT_FALSE(node_source_parts({}, {{2s, 4s}}).cpu_package_j);
}

}  // namespace
}  // namespace wattwise::measure
