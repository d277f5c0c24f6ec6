#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "core/clock.hpp"
#include "sampling/hung_call.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {

// Runs a Sampler in real time on one thread (a CadenceLoop: every cadence and every GPU), sleeping until
// the next absolute deadline. stop() ends it, after which the sampler's traces are complete.
//
// A supervisor thread watches the sampling thread's driver calls (hung_call.hpp): one that has not
// returned after `hung_call_after` marks its GPU failed from the call's start (Sampler::mark_hung), the
// stuck thread is given up (detached; it parks should the call ever return) and a new sampling thread goes
// on with the other GPUs. So one GPU whose driver never answers costs that GPU's figures only, and stop()
// returns within `hung_call_after` however the driver behaves; so does start() (Sampler::begin runs on the
// sampling thread, watched too).
class ThreadedDriver {
 public:
  ThreadedDriver(Sampler& sampler, Clock& clock, Nanos hung_call_after = kDefaultHungCallAfter);
  ~ThreadedDriver();  // stops the threads if still running
  ThreadedDriver(const ThreadedDriver&) = delete;
  ThreadedDriver& operator=(const ThreadedDriver&) = delete;

  // Runs `hook` on the sampling thread every `period` (start + k * period), between the cadences. A
  // long-running reader (the exporter) takes the sampler's readings there with Sampler::take_traces():
  // on the thread that writes the stores, so they need no lock and the sampler never stops. Set it
  // before start(); an exception from the hook stops the sampling like one from a cadence.
  void every(Nanos period, std::function<void(Nanos now)> hook);

  void start();  // the sampling thread and its supervisor; returns once Sampler::begin has run there
  // Ends the sampling thread, which runs Sampler::finish last; idempotent. Rethrows what escaped a cadence
  // (not a GPU's error: the sampler keeps those), after finishing.
  void stop();

  // Fixed-cadence ticks skipped because the loop overran (summed over cadences, valid after stop).
  std::uint64_t skipped_ticks() const { return skipped_.load(); }
  // CPU time the sampling threads used, every cadence and the loop's own wake-ups (valid after stop); a
  // thread given up is not counted.
  Nanos thread_cpu() const { return thread_cpu_; }
  // Sampling threads given up because a driver call did not return (valid after stop).
  std::size_t threads_given_up() const { return given_up_; }

 private:
  void start_worker(Nanos start, bool begin);  // with mutex_ held; `begin`: Sampler::begin first
  void work(Nanos start);                      // a sampling thread's body
  void run_loop(Nanos start);
  void supervise();
  void sleep_until_or_stopped(Nanos deadline);

  Sampler& sampler_;
  Clock& clock_;
  Nanos hung_call_after_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<std::uint64_t> skipped_{0};
  Nanos thread_cpu_{0};  // added to by each sampling thread as it ends; read after stop()
  std::mutex error_mutex_;
  std::exception_ptr cadence_error_;
  bool running_ = false;
  Nanos hook_period_{0};
  std::function<void(Nanos now)> hook_;
  // The sampling thread in charge and its slot; replaced by the supervisor when it gives one up.
  std::mutex mutex_;
  std::condition_variable changed_;  // begun_ or worker_done_ changed
  std::shared_ptr<CallSlot> worker_slot_;
  std::thread worker_;
  bool worker_done_ = false;
  bool begun_ = false;
  std::size_t given_up_ = 0;
  std::thread supervisor_;
};

}  // namespace wattwise::sampling
