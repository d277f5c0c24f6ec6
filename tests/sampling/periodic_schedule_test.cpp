#include "sampling/periodic_schedule.hpp"

#include <gtest/gtest.h>

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

TEST(PeriodicSchedule, OnTimeTicksFollowStartPlusKPeriods) {
  PeriodicSchedule schedule(1s, 20ms);
  EXPECT_EQ(schedule.next_due(), 1s);
  EXPECT_EQ(schedule.advance(1s + 3ms), 0u);  // a tick that took 3 ms does not shift the next one
  EXPECT_EQ(schedule.next_due(), 1020ms);
  EXPECT_EQ(schedule.advance(1020ms), 0u);
  EXPECT_EQ(schedule.next_due(), 1040ms);
}

TEST(PeriodicSchedule, LateTickSkipsMissedDeadlinesInsteadOfBursting) {
  PeriodicSchedule schedule(0ms, 10ms);
  EXPECT_EQ(schedule.advance(35ms), 3u);  // 10, 20 and 30 ms were missed: next is 40 ms
  EXPECT_EQ(schedule.next_due(), 40ms);
}

}  // namespace
}  // namespace wattwise::sampling
