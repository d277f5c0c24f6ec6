#include "sampling/posting_grid.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

double ms(Nanos t) {
  return std::chrono::duration<double, std::milli>(t).count();
}

// Reads `spacing` apart with a 4 ms cost against postings at phase + n * period; a bracket per change.
std::vector<PostingBracket> brackets_of(Nanos period, Nanos phase, Nanos spacing, Nanos duration) {
  std::vector<PostingBracket> brackets;
  const auto postings_by = [&](Nanos t) { return t < phase ? -1 : (t - phase) / period; };
  Nanos last_mid = 2ms;
  for (Nanos t = spacing; t < duration; t += spacing) {
    const Nanos mid = t + 2ms;
    if (postings_by(mid) != postings_by(last_mid)) brackets.push_back({last_mid, mid});
    last_mid = mid;
  }
  return brackets;
}

Nanos distance_to_grid(Nanos t, Nanos phase, Nanos period) {
  Nanos off = (t - phase) % period;
  if (off < 0ns) off += period;
  return std::min(off, period - off);
}

TEST(PostingGrid, LearnsAPeriodOtherThanTheAssumed100ms) {
  const auto grid = fit_posting_grid(brackets_of(96ms, 23ms, 13ms, 3s), kAssumedPostingPeriod, 3);
  ASSERT_TRUE(grid);
  EXPECT_TRUE(grid->period_fitted);
  EXPECT_NEAR(ms(grid->period), 96.0, 0.2);
  EXPECT_LT(distance_to_grid(grid->phase, 23ms, 96ms), 2ms);
  EXPECT_LE(grid->uncertainty, 3ms);
}

TEST(PostingGrid, AShortSpanKeepsTheAssumedPeriodAndFitsThePhase) {
  const auto brackets = brackets_of(100ms, 61ms, 13ms, 250ms);
  ASSERT_GE(brackets.size(), 2u);
  const auto grid = fit_posting_grid(brackets, kAssumedPostingPeriod, 2);
  ASSERT_TRUE(grid);
  EXPECT_FALSE(grid->period_fitted);
  EXPECT_EQ(grid->period, 100ms);
  EXPECT_LT(distance_to_grid(grid->phase, 61ms, 100ms), 7ms);
}

TEST(PostingGrid, IrregularPostingsHaveNoGrid) {
  std::vector<PostingBracket> brackets;
  Nanos posting = 50ms;
  std::srand(5);
  for (int i = 0; i < 40; ++i) {
    brackets.push_back({posting - 5ms, posting + 5ms});
    posting += 60ms + Nanos{(std::rand() % 80) * 1'000'000LL};
  }
  EXPECT_FALSE(fit_posting_grid(brackets, kAssumedPostingPeriod, 3));
}

TEST(PostingGrid, WideBracketsAreLeftOutOfTheFit) {
  auto brackets = brackets_of(100ms, 40ms, 13ms, 2s);
  const std::size_t narrow = brackets.size();
  brackets.push_back({2s, 2500ms});  // a sparse read's bracket: five postings
  const auto grid = fit_posting_grid(brackets, kAssumedPostingPeriod, narrow + 1);
  EXPECT_FALSE(grid) << "the wide bracket must not count";
  EXPECT_TRUE(fit_posting_grid(brackets, kAssumedPostingPeriod, narrow));
}

TEST(PostingGrid, AtOrBeforeAndAfterStepByOnePeriod) {
  const PostingGrid grid{.phase = 37ms, .period = 100ms};
  EXPECT_EQ(grid.at_or_before(37ms), 37ms);
  EXPECT_EQ(grid.at_or_before(136ms), 37ms);
  EXPECT_EQ(grid.at_or_before(10ms), -63ms);
  EXPECT_EQ(grid.after(37ms), 137ms);
}

}  // namespace
}  // namespace wattwise::sampling
