#include <gtest/gtest.h>

#include "analysis/pareto.hpp"
#include "run_builders.hpp"

namespace wattwise::analysis {
namespace {

using testing::run_at;

TEST(Pareto, FlagsOnlyUndominatedSettings) {
  // (time, energy): 300 W (10, 100) fastest; 250 W (11, 80); 200 W (12, 85) dominated by 250 W;
  // 150 W (14, 70) least energy; 175 W (14, 75) dominated by 150 W (same time, more energy).
  const auto settings = aggregate_runs({run_at(300, 100, 10), run_at(250, 80, 11), run_at(200, 85, 12),
                                        run_at(150, 70, 14), run_at(175, 75, 14)});
  const auto front = pareto_front(settings);  // settings are in order 150, 175, 200, 250, 300
  EXPECT_EQ(front, (std::vector<bool>{true, false, false, true, true}));
}

TEST(Pareto, IdenticalPointsAreBothOnTheFront) {
  const auto settings = aggregate_runs({run_at(300, 100, 10), run_at(250, 100, 10), run_at(200, 120, 12)});
  EXPECT_EQ(pareto_front(settings), (std::vector<bool>{false, true, true}));
}

TEST(Pareto, SameEnergySlowerIsDominated) {
  const auto settings = aggregate_runs({run_at(300, 100, 10), run_at(200, 100, 12)});
  EXPECT_EQ(pareto_front(settings), (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace wattwise::analysis
