#include "sampling/periodic_schedule.hpp"

#include "core/error.hpp"

namespace wattwise::sampling {

PeriodicSchedule::PeriodicSchedule(Nanos start, Nanos period) : start_(start), period_(period) {
  if (period <= Nanos{0}) throw Error(ErrorKind::kInternal, "periodic schedule needs a positive period");
}

std::uint64_t PeriodicSchedule::advance(Nanos now) {
  std::int64_t next = k_ + 1;
  if (start_ + period_ * next <= now) {
    // Late: jump to the first deadline strictly after `now`.
    next = (now - start_) / period_ + 1;
  }
  const auto skipped = static_cast<std::uint64_t>(next - k_ - 1);
  k_ = next;
  return skipped;
}

}  // namespace wattwise::sampling
