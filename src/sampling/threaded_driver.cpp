#include "sampling/threaded_driver.hpp"

#include <algorithm>
#include <exception>
#include <utility>

#include "core/error.hpp"
#include "core/thread_name.hpp"
#include "sampling/cadence_loop.hpp"
#include "sampling/periodic_schedule.hpp"
#include "sampling/sampler_cost.hpp"

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

void ThreadedDriver::every(Nanos period, std::function<void(Nanos now)> hook) {
  if (running_) throw Error(ErrorKind::kInternal, "ThreadedDriver::every() after start()");
  if (period <= Nanos{0}) throw Error(ErrorKind::kInternal, "ThreadedDriver::every() needs a period");
  hook_period_ = period;
  hook_ = std::move(hook);
}

void ThreadedDriver::start() {
  if (running_) return;
  stop_requested_ = false;
  const Nanos start = clock_.now();
  sampler_.begin(start);
  thread_ = named_thread("ww-sampler", [this, start] { run_loop(start); });
  running_ = true;
}

void ThreadedDriver::stop() {
  if (!running_) return;
  stop_requested_ = true;
  thread_.join();
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

void ThreadedDriver::run_loop(Nanos start) {
  struct CpuAtExit {
    Nanos& cpu;
    ~CpuAtExit() { cpu = thread_cpu_time(); }
  } cpu_at_exit{thread_cpu_};
  CadenceLoop loop(sampler_, start);
  // Without a hook its schedule is never consulted; any positive period keeps it well-formed.
  PeriodicSchedule hook_schedule(start + hook_period_, hook_ ? hook_period_ : Nanos{std::chrono::seconds(1)});
  while (true) {
    sleep_until_or_stopped(hook_ ? std::min(loop.next_due(), hook_schedule.next_due()) : loop.next_due());
    if (stop_requested_) return;
    try {
      skipped_ += loop.run_due(clock_.now(), clock_);
      if (hook_ && hook_schedule.next_due() <= clock_.now()) {
        hook_(clock_.now());
        hook_schedule.advance(clock_.now());
      }
    } catch (...) {
      // The sampler handles the GPUs' errors itself; anything else (out of memory, a bug) stops the
      // sampling and is raised by stop() on the measuring thread, instead of terminating the process.
      std::lock_guard lock(error_mutex_);
      if (!cadence_error_) cadence_error_ = std::current_exception();
      return;
    }
  }
}

}  // namespace wattwise::sampling
