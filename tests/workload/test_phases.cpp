#include "workload/phases.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace wattwise::workload {
namespace {

Marker marker(MarkerKind kind, const std::string& name, long long t, int pid = 1,
              std::optional<int> rank = {}, std::map<std::string, double> counters = {}) {
  return Marker{Nanos{t}, kind, name, std::move(counters), pid, rank, std::nullopt};
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

namespace wattwise::workload {
namespace {

// Issue 10, item 11: an end stamped before its begin aborted `measure` (the energy window ran backwards).
TEST(BuildPhases, EndBeforeItsBeginIsCountedUnmatchedAndNeverPaired) {
  auto set = build_phases({marker(B, "epoch", 100), marker(E, "epoch", 50), marker(E, "epoch", 150)});
  EXPECT_EQ(set.unmatched_ends, 1);
  EXPECT_EQ(set.unmatched_begins, 0);
  ASSERT_EQ(set.phases.size(), 1u);  // the begin stayed open and the later end closed it
  EXPECT_EQ(set.phases[0].begin, Nanos{100});
  EXPECT_EQ(set.phases[0].end, Nanos{150});
  EXPECT_TRUE(build_phases({marker(B, "x", 9), marker(E, "x", 1)}).phases.empty());
}

TEST(BuildPhases, MarksPhasesNestedInOneOfTheSameName) {
  auto set =
      build_phases({marker(B, "step", 0), marker(B, "step", 1), marker(B, "other", 2), marker(E, "other", 3),
                    marker(E, "step", 4), marker(P, "step", 5), marker(E, "step", 9), marker(B, "step", 9),
                    marker(E, "step", 12), marker(B, "step", 2, 7), marker(E, "step", 3, 7)});
  std::vector<std::pair<long long, int>> begin_and_depth;
  for (const auto& p : set.phases) {
    if (p.name == "step" && p.pid == 1) begin_and_depth.emplace_back(p.begin.count(), p.same_name_depth);
  }
  std::vector<std::pair<long long, int>> expected{{0, 0}, {1, 1}, {5, 1}, {9, 0}};
  EXPECT_EQ(begin_and_depth, expected);
  for (const auto& p : set.phases) {
    if (p.name == "other" || p.pid == 7) {
      EXPECT_EQ(p.same_name_depth, 0) << p.name;  // other name, other pid
    }
  }
}

TEST(BuildPhases, SurvivesHostileMarkerStreams) {
  // Nesting 10^5 deep, then the ends: linear work, every phase paired, depths counted.
  std::vector<Marker> deep;
  constexpr int kDepth = 100000;
  for (int i = 0; i < kDepth; ++i) deep.push_back(marker(B, "r", i));
  for (int i = 0; i < kDepth; ++i) deep.push_back(marker(E, "r", kDepth + i));
  auto set = build_phases(deep);
  ASSERT_EQ(set.phases.size(), static_cast<std::size_t>(kDepth));
  EXPECT_EQ(set.phases.front().same_name_depth, 0);
  EXPECT_EQ(set.phases.back().same_name_depth, kDepth - 1);
  // Timestamps at the ends of the range and huge counters.
  auto extremes = build_phases({marker(B, "far", 0), marker(E, "far", std::numeric_limits<long long>::max()),
                                marker(P, "big", 1, 1, {}, {{"samples", 1e308}, {"flops", -1e308}})});
  EXPECT_EQ(extremes.phases.size(), 2u);
  EXPECT_EQ(extremes.unmatched_ends, 0);
}

TEST(DroppedByJob, SumsTheLargestCountPerProcess) {
  auto with_dropped = [](int pid, long long n) {
    Marker m = marker(P, "x", 1, pid);
    m.dropped_before = n;
    return m;
  };
  EXPECT_EQ(dropped_by_job({marker(P, "x", 1), with_dropped(1, 3), with_dropped(1, 5), with_dropped(2, 2)}),
            7);
  EXPECT_EQ(dropped_by_job({marker(P, "x", 1)}), 0);
}

}  // namespace
}  // namespace wattwise::workload
