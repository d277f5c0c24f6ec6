#pragma once

#include <time.h>

#include <cstddef>
#include <mutex>
#include <optional>

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

struct HungCall {
  std::size_t gpu = 0;         // the GPU's position among the caller's (the sampler's constructor order)
  const char* call = nullptr;  // what was asked, a string literal ("energy_counter")
  Nanos since{0};              // when the call began, on the caller's clock
};

class CallSlot {
 public:
  // On the thread whose calls the slot watches, before its first call (set_current_call_slot does it).
  void bind_this_thread();
  // On the sampling thread, around each call to the driver.
  void enter(std::size_t gpu, const char* call, Nanos now);
  // False when the thread was given up during the call: it must then touch nothing of ours again.
  [[nodiscard]] bool leave();
  // On the supervisor: the call in progress, when it began at or before `began_by` and its thread has
  // used less than kHungCallMaxCpu since; the thread is then given up (its leave() says so).
  std::optional<HungCall> give_up_if_begun_by(Nanos began_by);

 private:
  std::mutex mutex_;
  bool in_call_ = false;
  bool given_up_ = false;
  HungCall call_;
  std::optional<clockid_t> cpu_clock_;  // the watched thread's CPU clock
  Nanos cpu_at_enter_{0};
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
