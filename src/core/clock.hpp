#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace wattwise {

// All timestamps in wattwise are nanoseconds on one monotonic time line: CLOCK_MONOTONIC for real
// measurements (the job's markers use the same clock), a virtual time line for simulations.
using Nanos = std::chrono::nanoseconds;

inline double to_seconds(Nanos d) {
  return std::chrono::duration<double>(d).count();
}
inline Nanos from_seconds(double s) {
  return std::chrono::duration_cast<Nanos>(std::chrono::duration<double>(s));
}

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Nanos now() const = 0;
  // Sleeps until the absolute time `t`; periodic loops use it to stay drift-free.
  virtual void sleep_until(Nanos t) = 0;
  // CLOCK_REALTIME minus this clock, now. NVML stamps buffered power samples with wall-clock
  // microseconds; this maps them onto our time line (before the finer alignment to the counter).
  virtual Nanos realtime_offset() const = 0;
};

// CLOCK_MONOTONIC, the clock the job's markers are stamped with.
class MonotonicClock final : public Clock {
 public:
  Nanos now() const override;
  void sleep_until(Nanos t) override;
  Nanos realtime_offset() const override;
};

// Simulated time: it only moves when someone advances it or sleeps, so a whole sweep can run in
// milliseconds and deterministically. Thread-safe, but meant for single-threaded event loops.
class VirtualClock final : public Clock {
 public:
  explicit VirtualClock(Nanos start = Nanos{0}) : now_(start) {}
  Nanos now() const override;
  void sleep_until(Nanos t) override;                          // jumps forward to t (never backwards)
  Nanos realtime_offset() const override { return Nanos{0}; }  // simulated devices stamp in virtual time
  void advance(Nanos d);

 private:
  mutable std::mutex mutex_;
  Nanos now_;
};

// Now, UTC, ISO 8601 to the second ("2026-11-23T17:00:00Z"): the stamps of journals and stored runs.
std::string utc_now_iso8601();

}  // namespace wattwise
