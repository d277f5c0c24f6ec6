#include "sampling/counter_schedule.hpp"

#include <gtest/gtest.h>

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

double ms(Nanos t) {
  return std::chrono::duration<double, std::milli>(t).count();
}

// A device posting its counter at phase + n * period (1 J a posting), read by a CounterSchedule whose
// reads each cost `cost`; returns the read instants (before) and the schedule.
struct ScheduleRun {
  std::vector<Nanos> reads;
  std::vector<Nanos> afters;
  CounterSchedule schedule;
};

ScheduleRun run_schedule(Nanos period, Nanos phase, Nanos duration, CounterScheduleConfig config = {},
                         bool counter_moves = true, Nanos cost = 4ms) {
  ScheduleRun run{{}, {}, CounterSchedule(config, 0ns)};
  const auto value_at = [&](Nanos t) -> std::uint64_t {
    if (!counter_moves || t < phase) return 0;
    return static_cast<std::uint64_t>((t - phase) / period + 1) * 1000;
  };
  Nanos now = 0ns;
  while (now < duration) {
    const Nanos before = std::max(now, run.schedule.next_read());
    const Nanos after = before + cost;
    run.reads.push_back(before);
    run.afters.push_back(after);
    run.schedule.on_read(before, after, value_at(before + cost / 2));
    now = after;
  }
  return run;
}

Nanos since_last_posting(Nanos t, Nanos phase, Nanos period) {
  Nanos off = (t - phase) % period;
  if (off < 0ns) off += period;
  return off;
}

TEST(CounterSchedule, LocksOnAndReadsJustAfterEveryKthPosting) {
  const ScheduleRun run = run_schedule(100ms, 37ms, 20s);
  ASSERT_EQ(run.schedule.mode(), CounterSchedule::Mode::kLocked);
  EXPECT_EQ(run.schedule.relock_misses(), 0u);
  // Learning takes a fraction of a second; after it, reads are k postings apart (checks aside).
  std::size_t learning = 0;
  while (learning < run.reads.size() && run.reads[learning] < 1s) ++learning;
  EXPECT_LT(learning, 20u) << "reads in the first second";
  std::size_t just_after = 0, later = 0;
  for (std::size_t i = learning; i < run.reads.size(); ++i) {
    const Nanos mid = run.reads[i] + 2ms;
    (since_last_posting(mid, 37ms, 100ms) < 15ms ? just_after : later)++;
  }
  EXPECT_GT(just_after, 0u);
  // The reads after learning: 10 / k a second plus a check read at each relock (1, 2, 4, 8, 8 s apart).
  const double steady_per_s = 10.0 / kDefaultPostingsPerRead;
  const double per_s = static_cast<double>(run.reads.size() - learning) / 19.0;
  EXPECT_LT(per_s, steady_per_s + 0.5);
  EXPECT_GT(per_s, 0.95 * steady_per_s);
  EXPECT_GE(just_after, (run.reads.size() - learning) * 3 / 4) << "most reads land just after a posting";
}

TEST(CounterSchedule, LearnsEachGpusOwnPeriod) {
  const ScheduleRun run = run_schedule(96ms, 11ms, 60s);
  ASSERT_TRUE(run.schedule.grid());
  EXPECT_TRUE(run.schedule.grid()->period_fitted);
  EXPECT_NEAR(ms(run.schedule.grid()->period), 96.0, 0.1);
  EXPECT_EQ(run.schedule.mode(), CounterSchedule::Mode::kLocked);
  EXPECT_LE(run.schedule.relock_misses(), 4u);  // each miss narrows the period: 100, then ~98, then 96
  // The last reads still land just after their postings: the lock holds over a minute. A lock check is
  // the exception: it reads just before a posting, and the read after it follows within ~20 ms.
  for (std::size_t i = run.reads.size() - 6; i + 1 < run.reads.size(); ++i) {
    if (run.reads[i + 1] - run.reads[i] < 30ms) continue;
    EXPECT_LT(since_last_posting(run.reads[i] + 2ms, 11ms, 96ms), 15ms) << "read " << i;
  }
}

TEST(CounterSchedule, RelearnReadsDenselyAtOnceAndLocksAgain) {
  // Locked on a 100 ms grid with reads every 5th posting; a job's end asks for dense reads so that the
  // next posting is bracketed to a few ms instead of up to 0.5 s.
  auto run = run_schedule(100ms, 37ms, 3s);
  ASSERT_EQ(run.schedule.mode(), CounterSchedule::Mode::kLocked);
  const Nanos end = run.afters.back();
  run.schedule.relearn(end);
  EXPECT_EQ(run.schedule.mode(), CounterSchedule::Mode::kLearning);
  EXPECT_LE(run.schedule.next_read(), end);
  // Read on as the schedule asks: the next change is bracketed within kLearnSpacing + a read.
  std::uint64_t value = (end - 37ms) / 100ms + 1;
  Nanos before = end, bracket_width = 1s;
  std::uint64_t last = value * 1000;
  for (int i = 0; i < 20 && run.schedule.mode() == CounterSchedule::Mode::kLearning; ++i) {
    const Nanos at = std::max(before, run.schedule.next_read());
    const std::uint64_t now_value = static_cast<std::uint64_t>((at + 2ms - 37ms) / 100ms + 1) * 1000;
    if (now_value != last) bracket_width = at + 4ms - before;
    last = now_value;
    run.schedule.on_read(at, at + 4ms, now_value);
    before = at;
  }
  EXPECT_LE(bracket_width, kLearnSpacing + 8ms);
  EXPECT_EQ(run.schedule.mode(), CounterSchedule::Mode::kLocked);
}

TEST(CounterSchedule, ACounterThatNeverMovesIsReadBlindAndCheaply) {
  const ScheduleRun run = run_schedule(100ms, 0ms, 20s, {}, /*counter_moves=*/false);
  EXPECT_FALSE(run.schedule.grid());
  // Learning gives up after kMaxLearnReads, then one read every k periods, learning again every 8 s.
  EXPECT_LT(run.reads.size(), 3 * kMaxLearnReads + 20 * 2 + 10);
}

TEST(CounterSchedule, AFixedPeriodReadsOnItsOwnGrid) {
  CounterScheduleConfig config;
  config.fixed_period = 17ms;
  config.fixed_offset = 5ms;
  const ScheduleRun run = run_schedule(100ms, 37ms, 1s, config, true, 1ms);
  ASSERT_GT(run.reads.size(), 50u);
  for (std::size_t i = 1; i < run.reads.size(); ++i) EXPECT_EQ((run.reads[i] - 5ms) % 17ms, 0ns);
  EXPECT_EQ(run.schedule.mode(), CounterSchedule::Mode::kFixed);
}

}  // namespace
}  // namespace wattwise::sampling

namespace wattwise::sampling {
namespace {

TEST(CounterSchedule, StatsSayWhereTheReadsWent) {
  CounterSchedule schedule({}, 0ns);
  Nanos now = 0ns;
  std::uint64_t value = 0;
  for (int i = 0; i < 400; ++i) {
    const Nanos before = std::max(now, schedule.next_read());
    // A device posting 1 J every 100 ms at phase 37 ms; the value is taken 2 ms into a 4 ms read.
    const Nanos mid = before + 2ms;
    value = mid < 37ms ? 0 : static_cast<std::uint64_t>((mid - 37ms) / 100ms + 1) * 1000;
    schedule.on_read(before, before + 4ms, value);
    now = before + 4ms;
  }
  const CounterScheduleStats& stats = schedule.stats();
  EXPECT_EQ(stats.reads, 400u);
  EXPECT_EQ(stats.learning_bursts, 1u);
  EXPECT_GT(stats.learning_reads, 2u);
  EXPECT_LT(stats.learning_reads, 30u);
  EXPECT_GT(stats.relock_checks, 0u);
  EXPECT_EQ(stats.relock_misses, 0u);
  EXPECT_EQ(stats.blind_reads, 0u);
  EXPECT_EQ(stats.given_up_learning, 0u);
  EXPECT_LT(stats.learning_reads + stats.relock_checks, stats.reads);
}

TEST(CounterSchedule, SlowReadsEndALearningBurstEarly) {
  // Every read held up to 30 ms (a saturated node preempting the driver's spin): no bracket is narrow
  // enough to learn from, so each burst stops after kLearnProbeReads reads instead of kMaxLearnReads.
  CounterSchedule schedule({}, 0ns);
  Nanos now = 0ns;
  while (now < 60s) {
    const Nanos before = std::max(now, schedule.next_read());
    const Nanos mid = before + 15ms;
    const auto value = static_cast<std::uint64_t>((mid + 63ms) / 100ms) * 1000;
    schedule.on_read(before, before + 30ms, value);
    now = before + 30ms;
  }
  const CounterScheduleStats& stats = schedule.stats();
  EXPECT_NE(schedule.mode(), CounterSchedule::Mode::kLocked);
  ASSERT_GE(stats.learning_bursts, 3u) << "learning again after 8, 16, ... s";
  EXPECT_EQ(stats.given_up_learning,
            stats.learning_bursts - (schedule.mode() == CounterSchedule::Mode::kLearning));
  EXPECT_LE(stats.learning_reads, kLearnProbeReads * stats.learning_bursts);
  EXPECT_LT(kLearnProbeReads, kMaxLearnReads);
  EXPECT_GT(stats.blind_reads, 0u);
}

}  // namespace
}  // namespace wattwise::sampling
