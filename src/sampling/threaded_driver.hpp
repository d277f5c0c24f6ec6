#pragma once

#include <atomic>
#include <exception>
#include <functional>
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

  // Runs `hook` on the sampling thread every `period` (start + k * period), between the cadences. A
  // long-running reader (the exporter) takes the sampler's readings there with Sampler::take_traces():
  // on the thread that writes the stores, so they need no lock and the sampler never stops. Set it
  // before start(); an exception from the hook stops the sampling like one from a cadence.
  void every(Nanos period, std::function<void(Nanos now)> hook);

  void start();  // Sampler::begin, then the sampling thread
  // Joins the thread, then Sampler::finish; idempotent. Rethrows what escaped a cadence (not a GPU's
  // error: the sampler keeps those), after finishing.
  void stop();

  // Fixed-cadence ticks skipped because the loop overran (summed over cadences, valid after stop).
  std::uint64_t skipped_ticks() const { return skipped_.load(); }
  // CPU time the sampling thread used, every cadence and the loop's own wake-ups (valid after stop).
  Nanos thread_cpu() const { return thread_cpu_; }

 private:
  void run_loop(Nanos start);
  void sleep_until_or_stopped(Nanos deadline);

  Sampler& sampler_;
  Clock& clock_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::uint64_t> skipped_{0};
  Nanos thread_cpu_{0};  // written by the sampling thread as it ends; read after join()
  std::thread thread_;
  std::mutex error_mutex_;
  std::exception_ptr cadence_error_;
  bool running_ = false;
  Nanos hook_period_{0};
  std::function<void(Nanos now)> hook_;
};

}  // namespace wattwise::sampling
