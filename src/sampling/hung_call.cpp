#include "sampling/hung_call.hpp"

#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <thread>

namespace wattwise::sampling {

namespace {
thread_local CallSlot* t_call_slot = nullptr;
}  // namespace

namespace {

Nanos cpu_time(clockid_t clock) {
  timespec ts{};
  if (clock_gettime(clock, &ts) != 0) return Nanos{0};
  return Nanos{static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec};
}

}  // namespace

void CallSlot::bind_this_thread() {
  clockid_t clock{};
  std::lock_guard lock(mutex_);
  if (pthread_getcpuclockid(pthread_self(), &clock) == 0) cpu_clock_ = clock;
}

void CallSlot::enter(std::size_t gpu, const char* call, Nanos now) {
  const Nanos cpu = cpu_time(CLOCK_THREAD_CPUTIME_ID);
  std::lock_guard lock(mutex_);
  in_call_ = true;
  call_ = HungCall{gpu, call, now};
  cpu_at_enter_ = cpu;
}

bool CallSlot::leave() {
  std::lock_guard lock(mutex_);
  in_call_ = false;
  return !given_up_;
}

std::optional<HungCall> CallSlot::give_up_if_begun_by(Nanos began_by) {
  std::lock_guard lock(mutex_);
  if (!in_call_ || given_up_ || call_.since > began_by) return std::nullopt;
  // The thread is inside its call (leave() waits for this lock), so its CPU clock is valid.
  if (cpu_clock_ && cpu_time(*cpu_clock_) - cpu_at_enter_ >= kHungCallMaxCpu) return std::nullopt;
  given_up_ = true;
  return call_;
}

CallSlot* current_call_slot() {
  return t_call_slot;
}

void set_current_call_slot(CallSlot* slot) {
  if (slot != nullptr) slot->bind_this_thread();
  t_call_slot = slot;
}

void park_forever() {
  // No signal handler runs on this thread again: it could only run our code, which is no longer ours to run.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  while (true) std::this_thread::sleep_for(std::chrono::hours(24));
}

WatchedCall::WatchedCall(std::size_t gpu, const char* call, const Clock& clock) : slot_(current_call_slot()) {
  if (slot_ != nullptr) slot_->enter(gpu, call, clock.now());
}

WatchedCall::~WatchedCall() {
  if (slot_ != nullptr && !slot_->leave()) park_forever();
}

}  // namespace wattwise::sampling
