#include "sampling/threaded_driver.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "sampling/periodic_schedule.hpp"

namespace wattwise::sampling {
namespace {

// The longest a sleeping thread goes without checking for stop(): stop stays prompt even with a 1 s
// drain period, while the last slice is still an absolute sleep to the exact deadline.
constexpr Nanos kStopCheckSlice = std::chrono::milliseconds(20);

}  // namespace

ThreadedDriver::ThreadedDriver(Sampler& sampler, Clock& clock) : sampler_(sampler), clock_(clock) {}

ThreadedDriver::~ThreadedDriver() {
  try {
    stop();
  } catch (...) {
    // A destructor must not throw; the readings taken so far stay in the sampler.
  }
}

void ThreadedDriver::start() {
  if (running_) return;
  stop_requested_ = false;
  const Nanos start = clock_.now();
  sampler_.begin(start);
  const SamplerPeriods& p = sampler_.periods();
  // The first ticks are one period after begin(), which already read every counter.
  threads_.emplace_back([this, start, p] {
    run_cadence(start + p.counter_tick, p.counter_tick, [this](Nanos now) { sampler_.sample_counters(now); });
  });
  threads_.emplace_back(
      [this, start, p] { run_cadence(start, p.fast, [this](Nanos now) { sampler_.sample_fast(now); }); });
  threads_.emplace_back([this, start, p] {
    run_cadence(start, p.telemetry, [this](Nanos now) { sampler_.sample_telemetry(now); });
  });
  threads_.emplace_back([this, start, p] {
    run_cadence(start + p.drain, p.drain, [this](Nanos now) { sampler_.drain_samples(now); });
  });
  running_ = true;
}

void ThreadedDriver::stop() {
  if (!running_) return;
  stop_requested_ = true;
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  running_ = false;
  sampler_.finish(clock_.now());
  if (cadence_error_) std::rethrow_exception(std::exchange(cadence_error_, nullptr));
}

void ThreadedDriver::sleep_until_or_stopped(Nanos deadline) {
  while (!stop_requested_) {
    const Nanos now = clock_.now();
    if (now >= deadline) return;
    clock_.sleep_until(std::min(deadline, now + kStopCheckSlice));
  }
}

void ThreadedDriver::run_cadence(Nanos start, Nanos period, const std::function<void(Nanos)>& tick) {
  PeriodicSchedule schedule(start, period);
  while (true) {
    sleep_until_or_stopped(schedule.next_due());
    if (stop_requested_) return;
    try {
      tick(clock_.now());
    } catch (...) {
      // The sampler handles the GPUs' errors itself; anything else (out of memory, a bug) stops this
      // cadence and is raised by stop() on the measuring thread, instead of terminating the process.
      std::lock_guard lock(error_mutex_);
      if (!cadence_error_) cadence_error_ = std::current_exception();
      return;
    }
    skipped_ += schedule.advance(clock_.now());
  }
}

}  // namespace wattwise::sampling
