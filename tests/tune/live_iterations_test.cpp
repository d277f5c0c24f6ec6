#include "tune/live_iterations.hpp"

#include <algorithm>

#include <gtest/gtest.h>

namespace wattwise::tune {
namespace {

using workload::Marker;
using workload::MarkerKind;

Marker marker(MarkerKind kind, double t_s, int pid, std::optional<int> rank = std::nullopt,
              const std::string& name = "iteration") {
  Marker m;
  m.kind = kind;
  m.t = from_seconds(t_s);
  m.name = name;
  m.pid = pid;
  m.rank = rank;
  return m;
}

TEST(IterationAssembler, PairsOneRanksBeginAndEndIntoIterationsInOrder) {
  IterationAssembler a;
  EXPECT_FALSE(a.heard_any());
  auto done = a.add({marker(MarkerKind::kBegin, 1.0, 7), marker(MarkerKind::kEnd, 1.2, 7),
                     marker(MarkerKind::kBegin, 1.3, 7)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].number, 0u);
  EXPECT_NEAR(done[0].time_s, 0.2, 1e-9);
  EXPECT_EQ(done[0].begin, from_seconds(1.0));
  EXPECT_EQ(done[0].end, from_seconds(1.2));
  EXPECT_TRUE(a.heard_any());
  done = a.add({marker(MarkerKind::kEnd, 1.45, 7)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].number, 1u);
  EXPECT_NEAR(done[0].time_s, 0.15, 1e-9);
}

TEST(IterationAssembler, DataParallelIterationWaitsForEveryRankAndTakesTheSlowest) {
  IterationAssembler a;
  // Rank 0 ends first: nothing is complete until rank 1 ends the same iteration.
  auto done = a.add({marker(MarkerKind::kBegin, 1.00, 10, 0), marker(MarkerKind::kBegin, 1.01, 11, 1),
                     marker(MarkerKind::kEnd, 1.10, 10, 0)});
  EXPECT_TRUE(done.empty());
  done = a.add({marker(MarkerKind::kEnd, 1.15, 11, 1)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].ranks, 2u);
  EXPECT_NEAR(done[0].time_s, 0.14, 1e-9);  // rank 1's own 1.01 -> 1.15
  EXPECT_EQ(done[0].begin, from_seconds(1.00));
  EXPECT_EQ(done[0].end, from_seconds(1.15));
}

TEST(IterationAssembler, OtherNamesPointsAndUnmatchedEndsAreIgnored) {
  IterationAssembler a;
  auto done = a.add({marker(MarkerKind::kBegin, 1.0, 7, std::nullopt, "epoch"),
                     marker(MarkerKind::kPoint, 1.0, 7), marker(MarkerKind::kEnd, 1.1, 7)});
  EXPECT_TRUE(done.empty());
  done = a.add({marker(MarkerKind::kBegin, 2.0, 7), marker(MarkerKind::kEnd, 2.5, 7)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].number, 0u);
  EXPECT_NEAR(done[0].time_s, 0.5, 1e-9);
}

TEST(IterationAssembler, NestedIterationsOfTheSameNameCountOnce) {
  IterationAssembler a;
  const auto done = a.add({marker(MarkerKind::kBegin, 1.0, 7), marker(MarkerKind::kBegin, 1.1, 7),
                           marker(MarkerKind::kEnd, 1.2, 7), marker(MarkerKind::kEnd, 1.3, 7)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_NEAR(done[0].time_s, 0.3, 1e-9);
}

TEST(IterationAssembler, ARankHeardLateJoinsAtTheNextIteration) {
  IterationAssembler a;
  auto done = a.add({marker(MarkerKind::kBegin, 1.0, 10, 0), marker(MarkerKind::kEnd, 1.1, 10, 0)});
  ASSERT_EQ(done.size(), 1u);
  // Rank 1 starts marking now: its first iteration is the job's second, not a blocked first.
  done = a.add({marker(MarkerKind::kBegin, 1.2, 10, 0), marker(MarkerKind::kBegin, 1.2, 11, 1),
                marker(MarkerKind::kEnd, 1.3, 10, 0), marker(MarkerKind::kEnd, 1.35, 11, 1)});
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].number, 1u);
  EXPECT_EQ(done[0].ranks, 2u);
  EXPECT_NEAR(done[0].time_s, 0.15, 1e-9);
}

TEST(IterationAssembler, RanksOutOfStepGiveIterationsThatTileTimeWithoutOverlap) {
  // Two ranks marking 0.1 s iterations, rank 1 half an iteration behind rank 0. Each joined iteration spans
  // 0.15 s from the earliest begin to the latest end; taken whole, consecutive ones would overlap by 0.05 s
  // and their energies add up to 1.5x the job's.
  IterationAssembler a;
  std::vector<Marker> markers;
  for (int i = 0; i < 5; ++i) {
    markers.push_back(marker(MarkerKind::kBegin, 1.0 + 0.1 * i, 10, 0));
    markers.push_back(marker(MarkerKind::kEnd, 1.1 + 0.1 * i, 10, 0));
    markers.push_back(marker(MarkerKind::kBegin, 1.05 + 0.1 * i, 11, 1));
    markers.push_back(marker(MarkerKind::kEnd, 1.15 + 0.1 * i, 11, 1));
  }
  std::stable_sort(markers.begin(), markers.end(), [](const Marker& x, const Marker& y) { return x.t < y.t; });
  const auto done = a.add(markers);
  ASSERT_EQ(done.size(), 5u);
  EXPECT_EQ(done[0].begin, from_seconds(1.0));
  for (std::size_t i = 1; i < done.size(); ++i) {
    EXPECT_EQ(done[i].begin, done[i - 1].end) << "iteration " << i;
    EXPECT_NEAR(to_seconds(done[i].end - done[i].begin), 0.1, 1e-6);
    EXPECT_NEAR(done[i].time_s, 0.1, 1e-9);  // the pace is each rank's own duration
  }
  EXPECT_NEAR(to_seconds(done.back().end - done.front().begin), 0.55, 1e-6);
}

TEST(IterationAssembler, ARankWhoseMarkersArriveLateLinesUpWithItsPeersInTime) {
  // Four data-parallel ranks in step (0.1 s iterations); rank 3's markers of iteration 0 arrive only after
  // ranks 0-2 completed it. Numbered from the next iteration to emit, rank 3's iteration 0 would be joined
  // with its peers' iteration 1, and every joined iteration would span two.
  IterationAssembler a;
  std::vector<Marker> first;
  for (int r = 0; r < 3; ++r) {
    first.push_back(marker(MarkerKind::kBegin, 1.0, 10 + r, r));
    first.push_back(marker(MarkerKind::kEnd, 1.1, 10 + r, r));
  }
  auto done = a.add(first);
  ASSERT_EQ(done.size(), 1u);
  std::vector<Marker> rest = {marker(MarkerKind::kBegin, 1.0, 13, 3), marker(MarkerKind::kEnd, 1.1, 13, 3)};
  for (int i = 1; i <= 3; ++i) {
    for (int r = 0; r < 4; ++r) {
      rest.push_back(marker(MarkerKind::kBegin, 1.0 + 0.1 * i, 10 + r, r));
      rest.push_back(marker(MarkerKind::kEnd, 1.1 + 0.1 * i, 10 + r, r));
    }
  }
  done = a.add(rest);
  ASSERT_EQ(done.size(), 3u);
  for (std::size_t i = 0; i < done.size(); ++i) {
    EXPECT_EQ(done[i].number, i + 1);
    EXPECT_EQ(done[i].ranks, 4u);
    // Each joined iteration spans one iteration of the ranks, not two.
    EXPECT_NEAR(to_seconds(done[i].end - done[i].begin), 0.1, 1e-9) << "iteration " << done[i].number;
    EXPECT_EQ(done[i].begin, from_seconds(1.0 + 0.1 * static_cast<double>(i + 1)));
  }
}

}  // namespace
}  // namespace wattwise::tune
