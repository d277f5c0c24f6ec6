#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {

// Runs a Sampler in real time: one thread per cadence (counter, fast, drain), each sleeping until the
// absolute deadlines start + k * period. Threads never share mutable data: each drives one cadence,
// whose store only it writes; stop() joins them, after which the sampler's traces are complete.
class ThreadedDriver {
 public:
  ThreadedDriver(Sampler& sampler, Clock& clock);
  ~ThreadedDriver();  // stops the threads if still running
  ThreadedDriver(const ThreadedDriver&) = delete;
  ThreadedDriver& operator=(const ThreadedDriver&) = delete;

  void start();  // Sampler::begin, then the three threads
  // Joins the threads, then Sampler::finish; idempotent. Rethrows what escaped a cadence (not a GPU's
  // error: the sampler keeps those), after finishing.
  void stop();

  // Ticks that were skipped because the previous one overran (summed over cadences, valid after stop).
  std::uint64_t skipped_ticks() const { return skipped_.load(); }

 private:
  void run_cadence(Nanos start, Nanos period, const std::function<void(Nanos)>& tick);
  void sleep_until_or_stopped(Nanos deadline);

  Sampler& sampler_;
  Clock& clock_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::uint64_t> skipped_{0};
  std::vector<std::thread> threads_;
  std::mutex error_mutex_;
  std::exception_ptr cadence_error_;
  bool running_ = false;
};

}  // namespace wattwise::sampling
