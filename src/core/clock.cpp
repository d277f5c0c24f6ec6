#include "core/clock.hpp"

#include <cerrno>
#include <ctime>

namespace wattwise {

Nanos MonotonicClock::now() const {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Nanos{static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec};
}

void MonotonicClock::sleep_until(Nanos t) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(t.count() / 1'000'000'000LL);
  ts.tv_nsec = static_cast<long>(t.count() % 1'000'000'000LL);
  // Absolute sleep: a late wake-up does not push every later period back (no drift).
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

Nanos MonotonicClock::realtime_offset() const {
  timespec real{};
  timespec mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return Nanos{(static_cast<long long>(real.tv_sec) - mono.tv_sec) * 1'000'000'000LL +
               (real.tv_nsec - mono.tv_nsec)};
}

Nanos VirtualClock::now() const {
  std::lock_guard lock(mutex_);
  return now_;
}

void VirtualClock::sleep_until(Nanos t) {
  std::lock_guard lock(mutex_);
  if (t > now_) now_ = t;
}

void VirtualClock::advance(Nanos d) {
  std::lock_guard lock(mutex_);
  now_ += d;
}

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace wattwise
