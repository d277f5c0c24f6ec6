// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/counter_schedule.hpp"

#include <algorithm>

namespace wattwise::sampling {

CounterSchedule::CounterSchedule(CounterScheduleConfig config, Nanos first_read)
    : config_(config), mode_(config.fixed_period ? Mode::kFixed : Mode::kLearning), next_(first_read) {
  config_.postings_per_read = std::max(config_.postings_per_read, 1u);
  if (mode_ == Mode::kLearning) ++stats_.learning_bursts;
}

std::optional<PostingGrid> CounterSchedule::fit(std::size_t min_brackets) const {
  return fit_posting_grid(brackets_, grid_ ? grid_->period : kAssumedPostingPeriod, min_brackets);
}

void CounterSchedule::on_read(Nanos before, Nanos after, std::optional<std::uint64_t> energy_mj) {
  ++stats_.reads;
  stats_.learning_reads += mode_ == Mode::kLearning;
  stats_.blind_reads += mode_ == Mode::kBlind;
  stats_.relock_checks += mode_ == Mode::kLocked && pre_read_next_;
  changed_ = false;
  if (energy_mj) {
    if (last_before_ && *energy_mj != last_mj_) {
      changed_ = true;
      // The value is taken somewhere inside each read: the posting came after the previous read began
      // and before this one ended, however long a read was held up (a busy node preempts the spin).
      const PostingBracket bracket{*last_before_, after};
      const Nanos period = grid_ ? grid_->period : kAssumedPostingPeriod;
      // Only narrow brackets teach anything about the grid; a sparse read's holds k postings.
      if (static_cast<double>(bracket.width().count()) <
          kPeriodFitMaxWidth * static_cast<double>(period.count())) {
        brackets_.push_back(bracket);
        ++brackets_added_;
        if (brackets_.size() > kKeptBrackets) brackets_.erase(brackets_.begin());
      }
    }
    last_before_ = before;
    last_mj_ = *energy_mj;
  }
  last_cost_ = after - before;
  switch (mode_) {
    case Mode::kFixed: {
      // The first tick of offset + n * period after this read; ticks passed while reading are skipped.
      const Nanos period = *config_.fixed_period;
      const Nanos since = after - config_.fixed_offset;
      const std::int64_t ticks = since / period - (since % period < Nanos{0} ? 1 : 0);  // floor
      next_ = config_.fixed_offset + period * (ticks + 1);
      break;
    }
    case Mode::kLearning:
      learn(before, after);
      break;
    case Mode::kBlind:
      if (after >= blind_until_) {
        start_learning(after);
      } else {
        next_ = after + kAssumedPostingPeriod * config_.postings_per_read;
      }
      break;
    case Mode::kLocked:
      track(after);
      break;
  }
}

void CounterSchedule::relearn(Nanos now) {
  if (mode_ != Mode::kFixed) start_learning(std::min(next_, now));
}

void CounterSchedule::start_learning(Nanos after) {
  mode_ = Mode::kLearning;
  ++stats_.learning_bursts;
  learn_reads_ = 0;
  slow_learn_reads_ = 0;
  brackets_at_learn_start_ = brackets_added_;
  relock_interval_ = kFirstRelock;
  pre_read_next_ = checking_ = false;
  next_ = after;
}

void CounterSchedule::learn(Nanos before, Nanos after) {
  ++learn_reads_;
  slow_learn_reads_ += after - before > kSlowLearnRead;
  const bool learnt_something = brackets_added_ > brackets_at_learn_start_;
  if (const std::optional<PostingGrid> grid = learnt_something ? fit(2) : std::nullopt;
      grid && grid->uncertainty <= kLockedUncertainty) {
    grid_ = grid;
    mode_ = Mode::kLocked;
    next_relock_ = after + relock_interval_;
    plan_locked(after);
    return;
  }
  const bool held_up =
      learn_reads_ >= kLearnProbeReads &&
      static_cast<double>(slow_learn_reads_) >= kSlowLearnFraction * static_cast<double>(learn_reads_);
  if (learn_reads_ >= kMaxLearnReads || held_up) {
    // Back off: each failed learning doubles the wait before the next (a counter that does not move).
    mode_ = Mode::kBlind;
    ++stats_.given_up_learning;
    blind_interval_ = std::min(blind_interval_ * 2, kMaxBlindInterval);
    blind_until_ = after + blind_interval_;
    next_ = after + kAssumedPostingPeriod * config_.postings_per_read;
    return;
  }
  next_ = std::max(before + kLearnSpacing, after);
  // A posting was just bracketed: nothing changes until shortly before the next one, so skip the quiet
  // part of the period (the reads then restart at another place relative to the posting).
  if (changed_ && !brackets_.empty() && brackets_.back().latest == after) {
    const PostingBracket& b = brackets_.back();
    const Nanos period = grid_ ? grid_->period : kAssumedPostingPeriod;
    next_ = std::max(next_, b.earliest + b.width() / 2 + period - kLearnSpacing * 3 / 2);
  }
}

void CounterSchedule::track(Nanos after) {
  if (pre_read_next_) {
    pre_read_next_ = false;
    // A check read that ends after the posting proves nothing (the sampling thread was late: a busy
    // node, another GPU's read): try again at the next read instead of taking it for a lost lock.
    if (after + kBracketSlack > target_posting_) {
      next_relock_ = after;
      plan_locked(after);
      return;
    }
    checking_ = true;
    next_ = target_posting_ + kReadGuard;
    return;
  }
  if (checking_) {
    checking_ = false;
    // The posting must have come between the check just before it and this read.
    if (!changed_) {
      ++stats_.relock_misses;
      start_learning(after);
      return;
    }
    if (const std::optional<PostingGrid> grid = fit(2)) grid_ = grid;
    relock_interval_ = std::min(relock_interval_ * 2, kMaxRelock);
    next_relock_ = after + relock_interval_;
  }
  plan_locked(after);
}

void CounterSchedule::plan_locked(Nanos after) {
  target_posting_ = grid_->at_or_before(after) + grid_->period * config_.postings_per_read;
  if (target_posting_ >= next_relock_) {
    pre_read_next_ = true;
    next_ = target_posting_ - kReadGuard - last_cost_;
  } else {
    next_ = target_posting_ + kReadGuard;
  }
}

}  // namespace wattwise::sampling
