#pragma once

#include <cstdint>

#include "core/clock.hpp"

namespace wattwise::sampling {

// Deadlines of one periodic cadence: start + k * period, never "last wake-up + period", so a late
// wake-up does not shift every later tick (no drift). A tick that is already past when we get to it is
// skipped rather than run in a burst: a burst of reads would all see the same stale hardware value.
class PeriodicSchedule {
 public:
  PeriodicSchedule(Nanos start, Nanos period);

  Nanos next_due() const { return start_ + period_ * k_; }
  Nanos period() const { return period_; }

  // Call after running the tick due at next_due(); `now` is the time the tick finished. Moves to the
  // first deadline after `now` and returns how many deadlines were skipped.
  std::uint64_t advance(Nanos now);

 private:
  Nanos start_;
  Nanos period_;
  std::int64_t k_ = 0;
};

}  // namespace wattwise::sampling
