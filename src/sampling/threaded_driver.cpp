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

ThreadedDriver::ThreadedDriver(Sampler& sampler, Clock& clock, Nanos hung_call_after)
    : sampler_(sampler), clock_(clock), hung_call_after_(hung_call_after) {}

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
  std::unique_lock lock(mutex_);
  begun_ = false;
  start_worker(start, true);
  supervisor_ = named_thread("ww-sampler-watch", [this] { supervise(); });
  running_ = true;
  // Sampler::begin runs on the sampling thread, watched like every call: its reads are the totals' baseline.
  changed_.wait(lock, [this] { return begun_; });
  lock.unlock();
  bool failed = false;
  {
    std::lock_guard error_lock(error_mutex_);
    failed = cadence_error_ != nullptr;
  }
  if (failed) stop();  // rethrows what Sampler::begin threw
}

void ThreadedDriver::start_worker(Nanos start, bool begin) {
  worker_slot_ = std::make_shared<CallSlot>();
  worker_done_ = false;
  // The thread holds its own reference to its slot: given up, it may outlive this driver.
  worker_ = named_thread("ww-sampler", [this, slot = worker_slot_, start, begin] {
    set_current_call_slot(slot.get());
    bool began = true;
    if (begin) {
      try {
        sampler_.begin(start);
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        cadence_error_ = std::current_exception();
        began = false;
      }
      std::lock_guard lock(mutex_);
      begun_ = true;
      changed_.notify_all();
    }
    if (began) {
      work(start);
      return;
    }
    std::lock_guard lock(mutex_);
    worker_done_ = true;
    changed_.notify_all();
  });
}

void ThreadedDriver::work(Nanos start) {
  run_loop(start);
  // A cadence's error ended the loop early: the last readings still wait for the end of the sampling.
  while (!stop_requested_) clock_.sleep_until(clock_.now() + kStopCheckSlice);
  try {
    sampler_.finish(clock_.now());
  } catch (...) {
    std::lock_guard lock(error_mutex_);
    if (!cadence_error_) cadence_error_ = std::current_exception();
  }
  std::lock_guard lock(mutex_);
  worker_done_ = true;
  changed_.notify_all();
}

void ThreadedDriver::supervise() {
  std::unique_lock lock(mutex_);
  // A call is looked at several times within its limit, so a hung one is found at most a fraction late.
  const Nanos look_every = std::clamp(hung_call_after_ / 4, Nanos{std::chrono::milliseconds(10)},
                                      Nanos{std::chrono::milliseconds(500)});
  while (!worker_done_) {
    changed_.wait_for(lock, look_every);
    if (worker_done_) break;
    const auto hung = worker_slot_->give_up_if_begun_by(clock_.now() - hung_call_after_);
    if (!hung) continue;
    // The stuck thread is left to its call (it parks should the call return); the GPU is failed from the
    // call's start, so no cadence calls it again, and a new thread samples the others from now on.
    worker_.detach();
    ++given_up_;
    sampler_.mark_hung(*hung, hung_call_after_);
    // Given up in Sampler::begin (its last step is the counters' first reads), the new thread goes on
    // from there: the GPUs still unread are read at their schedules' first turn.
    start_worker(clock_.now(), false);
    begun_ = true;
    changed_.notify_all();
  }
  lock.unlock();
  worker_.join();
}

void ThreadedDriver::stop() {
  if (!running_) return;
  stop_requested_ = true;
  supervisor_.join();  // returns once a sampling thread has finished, every hung one given up
  running_ = false;
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
    ~CpuAtExit() { cpu += thread_cpu_time(); }
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
