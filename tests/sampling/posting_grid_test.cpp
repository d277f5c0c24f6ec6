#include "sampling/posting_grid.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// A long job's narrow brackets as the read schedule makes them (counter_schedule.hpp) against postings at
// phase + n * period: a learning burst (reads 13 ms apart, spread around the postings) at `learn_at`, then
// a relock check every 8 s, read 8 ms before and 8 ms after where the schedule believes the posting is,
// `belief_error` from the truth.
std::vector<PostingBracket> job_brackets(Nanos period, Nanos phase, Nanos duration, Nanos belief_error,
                                         std::vector<Nanos> learn_at) {
  std::vector<PostingBracket> brackets;
  for (const Nanos start : learn_at)
    for (const PostingBracket& b : brackets_of(period, phase, 13ms, 1500ms)) {
      const auto n = (start / period) * period;
      brackets.push_back({b.earliest + n, b.latest + n});
    }
  for (Nanos posting = phase + 10 * period; posting < duration; posting += 80 * period)
    brackets.push_back({posting + belief_error - 8ms, posting + belief_error + 8ms});
  std::sort(brackets.begin(), brackets.end(),
            [](const PostingBracket& a, const PostingBracket& b) { return a.earliest < b.earliest; });
  return brackets;
}

// `measure` folds a long job a minute at a time, each fold reading the last 90 s.
PostingGridLearner learn_by_stretches(const std::vector<PostingBracket>& brackets, Nanos duration) {
  PostingGridLearner learner;
  for (Nanos end = 90s; end < duration + 60s; end += 60s) {
    std::vector<PostingBracket> stretch;
    for (const PostingBracket& b : brackets)
      if (b.earliest >= end - 90s && b.latest < end) stretch.push_back(b);
    learner.add(stretch);
  }
  return learner;
}

// The folding's knots follow the grid (counter_timeline.hpp): a stretch's own brackets put it at the
// schedule's belief, 3.7 ms from the postings; the learner, fed the same stretches, finds the grid of every
// bracket of the job, which the learning burst narrowed, keeping a bounded number of them.
TEST(PostingGridLearner, StretchByStretchFindsTheGridOfTheWholeJobNotTheStretchs) {
  const Nanos duration = 2h;
  const auto brackets = job_brackets(100ms, 37ms, duration, -3700us, {0s});
  const auto whole = fit_posting_grid(brackets, kAssumedPostingPeriod, 2);
  ASSERT_TRUE(whole);
  std::vector<PostingBracket> last_minutes;
  for (const PostingBracket& b : brackets)
    if (b.earliest >= duration - 90s) last_minutes.push_back(b);
  const auto stretch = fit_posting_grid(last_minutes, kAssumedPostingPeriod, 2);
  ASSERT_TRUE(stretch);
  EXPECT_GT(std::chrono::abs(stretch->phase - whole->at_or_before(stretch->phase + 50ms)), 1ms)
      << "a stretch's own grid is the schedule's belief";

  const PostingGridLearner learner = learn_by_stretches(brackets, duration);
  ASSERT_TRUE(learner.grid());
  EXPECT_EQ(learner.grid()->period, whole->period);
  EXPECT_LE(std::chrono::abs(learner.grid()->at_or_before(whole->phase + 50ms) - whole->phase), 1us);
  EXPECT_EQ(learner.grid()->uncertainty, whole->uncertainty);
  EXPECT_LE(learner.kept(), 4 * PostingGridLearner::kKeptPerGroup);
  EXPECT_GT(brackets.size(), 7 * learner.kept());
}

// A learning burst in the middle of the job (after a missed relock) narrows the grid from where it is, and
// a period other than 100 ms is numbered right across hours of sparse brackets: the learner keeps the
// brackets that bound the phase wherever they came.
TEST(PostingGridLearner, KeepsTheBracketsOfALaterLearningBurstAndAnotherPeriod) {
  const Nanos duration = 3h;
  const auto brackets = job_brackets(99970us, 61ms, duration, 3ms, {0s, 5000s});
  const auto whole = fit_posting_grid(brackets, kAssumedPostingPeriod, 2);
  ASSERT_TRUE(whole);
  EXPECT_NEAR(ms(whole->period), 99.97, 0.001);
  const PostingGridLearner learner = learn_by_stretches(brackets, duration);
  ASSERT_TRUE(learner.grid());
  EXPECT_EQ(learner.grid()->period, whole->period);
  EXPECT_LE(std::chrono::abs(learner.grid()->at_or_before(whole->phase + 50ms) - whole->phase), 1us);
  EXPECT_EQ(learner.grid()->uncertainty, whole->uncertainty);
  // Three hours on, the grid still lies on the postings (within the brackets' slack), not a period off.
  EXPECT_LT(distance_to_grid(learner.grid()->at_or_before(duration), 61ms, 99970us), 4ms);
}

// Brackets that disagree with the grid (a read held up, stamped late) are not kept as the tightest: the
// grid stays that of the agreeing ones.
TEST(PostingGridLearner, BracketsThatDisagreeAreNotKeptAsBounds) {
  const Nanos duration = 1h;
  auto brackets = job_brackets(100ms, 37ms, duration, 0ms, {0s});
  for (Nanos t = 600s; t < duration; t += 600s) {
    const Nanos posting = PostingGrid{.phase = 37ms, .period = 100ms}.at_or_before(t);
    brackets.push_back({posting + 20ms, posting + 30ms});  // no posting inside
  }
  const PostingGridLearner learner = learn_by_stretches(brackets, duration);
  ASSERT_TRUE(learner.grid());
  EXPECT_LT(distance_to_grid(learner.grid()->phase, 37ms, 100ms), 3ms);
}

}  // namespace
}  // namespace wattwise::sampling
