#include "workload/phases.hpp"

#include <gtest/gtest.h>

namespace wattwise::workload {
namespace {

Marker marker(MarkerKind kind, const std::string& name, long long t, int pid = 1,
              std::optional<int> rank = {}, std::map<std::string, double> counters = {}) {
  return Marker{Nanos{t}, kind, name, std::move(counters), pid, rank};
}
constexpr auto B = MarkerKind::kBegin;
constexpr auto E = MarkerKind::kEnd;
constexpr auto P = MarkerKind::kPoint;

TEST(BuildPhases, PairsBeginAndEndAndSortsByBegin) {
  auto set = build_phases({marker(B, "training", 0), marker(B, "epoch", 10), marker(E, "epoch", 20),
                           marker(B, "epoch", 30), marker(E, "epoch", 40), marker(E, "training", 50)});
  ASSERT_EQ(set.phases.size(), 3u);
  EXPECT_EQ(set.phases[0].name, "training");
  EXPECT_EQ(set.phases[0].begin, Nanos{0});
  EXPECT_EQ(set.phases[0].end, Nanos{50});
  EXPECT_EQ(set.phases[1].begin, Nanos{10});
  EXPECT_EQ(set.phases[1].end, Nanos{20});
  EXPECT_EQ(set.phases[2].begin, Nanos{30});
  EXPECT_EQ(set.unmatched_begins, 0);
  EXPECT_EQ(set.unmatched_ends, 0);
}

TEST(BuildPhases, SameNameNestsAndEndClosesTheInnermost) {
  auto set = build_phases(
      {marker(B, "block", 0), marker(B, "block", 5), marker(E, "block", 7), marker(E, "block", 9)});
  ASSERT_EQ(set.phases.size(), 2u);
  EXPECT_EQ(set.phases[0].begin, Nanos{0});
  EXPECT_EQ(set.phases[0].end, Nanos{9});
  EXPECT_EQ(set.phases[1].begin, Nanos{5});
  EXPECT_EQ(set.phases[1].end, Nanos{7});
}

TEST(BuildPhases, PointIsAZeroLengthPhase) {
  auto set = build_phases({marker(P, "checkpoint", 42)});
  ASSERT_EQ(set.phases.size(), 1u);
  EXPECT_EQ(set.phases[0].begin, Nanos{42});
  EXPECT_EQ(set.phases[0].end, Nanos{42});
}

TEST(BuildPhases, CountsUnmatchedEndsAndBegins) {
  auto set = build_phases({marker(E, "epoch", 1), marker(B, "epoch", 2), marker(B, "training", 3),
                           marker(E, "training", 4), marker(B, "epoch", 5)});
  EXPECT_EQ(set.unmatched_ends, 1);
  EXPECT_EQ(set.unmatched_begins, 2);
  ASSERT_EQ(set.phases.size(), 1u);
  EXPECT_EQ(set.phases[0].name, "training");
}

TEST(BuildPhases, DifferentPidsAndRanksDoNotCloseEachOther) {
  auto set = build_phases({marker(B, "iteration", 0, 1, 0), marker(B, "iteration", 1, 2, 1),
                           marker(E, "iteration", 5, 1, 0), marker(E, "iteration", 9, 2, 1),
                           marker(E, "iteration", 10, 3)});
  ASSERT_EQ(set.phases.size(), 2u);
  EXPECT_EQ(set.phases[0].end, Nanos{5});
  EXPECT_EQ(set.phases[0].rank, 0);
  EXPECT_EQ(set.phases[1].end, Nanos{9});
  EXPECT_EQ(set.phases[1].pid, 2);
  EXPECT_EQ(set.unmatched_ends, 1);
}

TEST(BuildPhases, MergesCountersAndTheEndWins) {
  auto set = build_phases({marker(B, "epoch", 0, 1, {}, {{"epoch", 3}, {"samples", 1}}),
                           marker(E, "epoch", 1, 1, {}, {{"samples", 128}})});
  ASSERT_EQ(set.phases.size(), 1u);
  std::map<std::string, double> expected{{"epoch", 3}, {"samples", 128}};
  EXPECT_EQ(set.phases[0].counters, expected);
}

}  // namespace
}  // namespace wattwise::workload
