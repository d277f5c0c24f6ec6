#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.hpp"

// A driver call that never returns (a GPU fallen off the bus can leave NVML blocked for good) must cost
// that GPU alone. The sampling thread says which call it is in and since when (a CallSlot); a supervisor
// (ThreadedDriver) that sees a call older than its limit gives the thread up and starts another for the
// other GPUs. The thread given up holds its own reference to its slot, so that, should the call ever
// return, it learns it was given up and touches nothing of ours again (it parks for good), whatever has
// become of the sampler meanwhile.
namespace wattwise::sampling {

// The longest a sampler's driver call may take before its GPU is taken as hung: NVML's calls take
// microseconds to ~25 ms on an H100 (docs/evidence/node-h100.md): a hundred times that is no slow call.
inline constexpr Nanos kDefaultHungCallAfter = std::chrono::seconds(3);
// ...and that has used less CPU than this meanwhile: a call blocked in the driver uses none, while one that
// is merely slow because the machine is starved of CPU (data loaders on every core) still gets some, and
// a call that computes is working. A call that spins forever is not told from a slow one.
inline constexpr Nanos kHungCallMaxCpu = std::chrono::milliseconds(20);
// ...and whose thread the kernel does not hold runnable: a thread starved to a sliver of a core uses less
// than kHungCallMaxCpu in the limit and yet is not blocked (on an H100 with wattwise's threads at nice 19
// beside four busy loops on their core, a 6 ms counter read took over 3 s and its GPU was taken as lost:
// docs/evidence/pinned-h100.md). A call blocked in the driver sleeps; a starved one is runnable now, or has
// waited on a run queue for at least this share of the time since the latest look before the call (the
// kernel's schedstat adds a wait only once the thread gets a CPU, hence the state too).
inline constexpr double kHungCallMaxRunQueueShare = 0.5;

// What the kernel says of a thread's scheduling (/proc/self/task/TID/stat and schedstat).
struct ThreadScheduling {
  bool runnable = false;  // state R: on a CPU or waiting for one
  // Waited for a CPU so far (schedstat's second field), counted when it got one; absent where the kernel
  // does not say (built without CONFIG_SCHED_INFO: no schedstat), the state still telling a starved thread.
  std::optional<Nanos> run_queue_wait;
};
// nullopt where /proc does not say (no /proc, the thread gone).
std::optional<ThreadScheduling> thread_scheduling(const std::string& task_dir);
// The calling thread's /proc/.../task/TID/ as the mounted /proc names it (via /proc/thread-self: right in a
// container whose /proc is another PID namespace's, where /proc/self/task/gettid() names another thread).
std::string this_threads_task_dir();
// How a slot reads its thread's scheduling: thread_scheduling in production, a fake in tests.
using SchedulingReader = std::function<std::optional<ThreadScheduling>(const std::string& task_dir)>;

struct HungCall {
  std::size_t gpu = 0;         // the GPU's position among the caller's (the sampler's constructor order)
  const char* call = nullptr;  // what was asked, a string literal ("energy_counter")
  Nanos since{0};              // when the call began, on the caller's clock
};

class CallSlot {
 public:
  // /proc's word on the thread, at times on the monotonic clock (the kernel counts waits in real time).
  CallSlot();
  // Tests: the scheduling as `read` says, at `clock`'s times (`clock` must outlive the slot).
  CallSlot(SchedulingReader read, const Clock& clock);
  // On the thread whose calls the slot watches, before its first call (set_current_call_slot does it).
  void bind_this_thread();
  // On the sampling thread, around each call to the driver.
  void enter(std::size_t gpu, const char* call, Nanos now);
  // False when the thread was given up during the call: it must then touch nothing of ours again.
  [[nodiscard]] bool leave();
  // On the supervisor: the call in progress, when it began at or before `began_by`, its thread has used
  // less than kHungCallMaxCpu since and is not starved (kHungCallMaxRunQueueShare); the thread is then given
  // up (its leave() says so). Called at every look, between calls too: each look notes the thread's
  // run-queue wait so far, and a call's wait is measured from the latest look before it began.
  std::optional<HungCall> give_up_if_begun_by(Nanos began_by);

 private:
  std::mutex mutex_;
  bool in_call_ = false;
  bool given_up_ = false;
  HungCall call_;
  std::optional<clockid_t> cpu_clock_;  // the watched thread's CPU clock
  Nanos cpu_at_enter_{0};
  // The watched thread's /proc/self/task/TID/, and the run-queue waits its looks saw, at clock_'s times:
  // the latest look's, and the latest look's before the call in progress (the call's first look, if none
  // came before it). "Before the call" by the calls entered by then, not by whether a look fell between
  // calls: a starved thread goes from call to call, and a wait measured from the last look between calls,
  // long ago, kept a call blocked after a long starved stretch from being given up for as long again.
  std::string task_dir_;
  std::uint64_t calls_entered_ = 0;
  SchedulingReader read_scheduling_;
  MonotonicClock monotonic_;
  const Clock* clock_ = &monotonic_;
  struct RunQueueLook {
    Nanos at{0};
    Nanos waited{0};
    std::uint64_t calls_entered = 0;  // by the look: it came before every call numbered higher
  };
  std::optional<RunQueueLook> latest_look_;
  std::optional<RunQueueLook> before_call_;
};

// The slot of the calling thread; nullptr (the default): nobody watches this thread's calls.
CallSlot* current_call_slot();
// Makes `slot` the calling thread's (and binds it to this thread's CPU clock).
void set_current_call_slot(CallSlot* slot);

// Blocks the calling thread for good, every signal blocked: the end of a thread given up.
[[noreturn]] void park_forever();

// Says to the calling thread's slot, if it has one, that the call `call` (a string literal) to GPU `gpu`
// runs while this lives. Its destructor parks the thread when the supervisor gave it up meanwhile, before
// anything declared earlier in the scope (the caller's cost bookkeeping) is touched.
class WatchedCall {
 public:
  WatchedCall(std::size_t gpu, const char* call, const Clock& clock);
  ~WatchedCall();
  WatchedCall(const WatchedCall&) = delete;
  WatchedCall& operator=(const WatchedCall&) = delete;

 private:
  CallSlot* slot_;
};

}  // namespace wattwise::sampling
