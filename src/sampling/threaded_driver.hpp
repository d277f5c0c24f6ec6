#pragma once

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {

// Runs a Sampler in real time on one thread (a CadenceLoop: every cadence and every GPU), sleeping until
// the next absolute deadline. stop() joins it, after which the sampler's traces are complete.
class ThreadedDriver {
 public:
  ThreadedDriver(Sampler& sampler, Clock& clock);
  ~ThreadedDriver();  // stops the threads if still running
  ThreadedDriver(const ThreadedDriver&) = delete;
  ThreadedDriver& operator=(const ThreadedDriver&) = delete;

  void start();  // Sampler::begin, then the sampling thread
  // Joins the thread, then Sampler::finish; idempotent. Rethrows what escaped a cadence (not a GPU's
  // error: the sampler keeps those), after finishing.
  void stop();

  // Fixed-cadence ticks skipped because the loop overran (summed over cadences, valid after stop).
  std::uint64_t skipped_ticks() const { return skipped_.load(); }

 private:
  void run_loop(Nanos start);
  void sleep_until_or_stopped(Nanos deadline);

  Sampler& sampler_;
  Clock& clock_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::uint64_t> skipped_{0};
  std::thread thread_;
  std::mutex error_mutex_;
  std::exception_ptr cadence_error_;
  bool running_ = false;
};

}  // namespace wattwise::sampling
