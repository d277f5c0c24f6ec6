// When a driver call is taken as hung (sampling/hung_call.hpp), with the thread's scheduling as a fake /proc
// says and a virtual clock: a thread blocked in the driver is given up once its call is older than the limit,
// a starved one is not.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "core/clock.hpp"
#include "sampling/hung_call.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

// The watched thread as the fake /proc shows it, and the supervisor's looks every 500 ms (ThreadedDriver's
// for the 3 s limit). The calls are entered and left on the test's own thread, whose CPU clock the slot
// reads: the test uses far less than kHungCallMaxCpu.
class WatchedThread {
 public:
  WatchedThread() : slot_([this](const std::string&) { return std::optional(state_); }, clock_) {
    slot_.bind_this_thread();
  }

  // A look after `elapsed`, the thread having waited `waited` for a CPU meanwhile and being `runnable` now.
  std::optional<HungCall> look_after(Nanos elapsed, Nanos waited, bool runnable) {
    clock_.advance(elapsed);
    state_.run_queue_wait += waited;
    state_.runnable = runnable;
    return slot_.give_up_if_begun_by(clock_.now() - kDefaultHungCallAfter);
  }
  void enter() { slot_.enter(0, "energy_counter", clock_.now()); }
  bool leave() { return slot_.leave(); }
  Nanos now() const { return clock_.now(); }

 private:
  VirtualClock clock_{100s};
  ThreadScheduling state_;
  CallSlot slot_;
};

TEST(HungCall, ACallBlockedAfterALongStarvedStretchIsGivenUpAtTheLimit) {
  // 30 s starved (nice 19 beside busy loops, docs/evidence/pinned-h100.md): every look finds the thread in a
  // call, a new one each time, runnable, having waited for a CPU 90% of the time. Then the GPU falls off the
  // bus and the next call blocks for good, the thread asleep. The run-queue wait was measured from the last
  // look outside a call, 30 s back: 27 s waited of 30 s + t, the call was taken as starved until t > 24 s.
  WatchedThread thread;
  ASSERT_FALSE(thread.look_after(500ms, 0ms, false));
  for (int i = 0; i < 60; ++i) {
    thread.enter();
    ASSERT_FALSE(thread.look_after(500ms, 450ms, true));
    ASSERT_TRUE(thread.leave());
  }
  thread.enter();
  const Nanos blocked_at = thread.now();
  std::optional<HungCall> hung;
  while (!hung && thread.now() < blocked_at + 60s) hung = thread.look_after(500ms, 0ms, false);
  ASSERT_TRUE(hung) << "a blocked call never given up";
  EXPECT_EQ(hung->since, blocked_at);
  EXPECT_LE(thread.now() - blocked_at, kDefaultHungCallAfter + 500ms)
      << "given up " << to_seconds(thread.now() - blocked_at) << " s after the call blocked";
  EXPECT_FALSE(thread.leave());
}

TEST(HungCall, ACallStarvedSinceTheLookBeforeItIsNotGivenUp) {
  // Asleep in the driver a moment at each look, but kept waiting for a CPU 90% of the time since the look
  // before the call: starved, not blocked, however old the call.
  WatchedThread thread;
  ASSERT_FALSE(thread.look_after(500ms, 0ms, false));
  thread.enter();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(thread.look_after(500ms, 450ms, false)) << "look " << i;
  EXPECT_TRUE(thread.leave());
}

TEST(HungCall, ACallStarvedAfterARunOfCallsIsNotGivenUp) {
  // As above, every look inside a call: the wait is measured from the look before this call, in the one
  // before it.
  WatchedThread thread;
  for (int i = 0; i < 10; ++i) {
    thread.enter();
    ASSERT_FALSE(thread.look_after(500ms, 450ms, true));
    ASSERT_TRUE(thread.leave());
  }
  thread.enter();
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(thread.look_after(500ms, 450ms, false)) << "look " << i;
  EXPECT_TRUE(thread.leave());
}

TEST(HungCall, ACallBlockedFromItsStartIsGivenUpAtTheLimit) {
  // Blocked from its start, no look before it: the wait is measured from the call's first look.
  WatchedThread thread;
  thread.enter();
  const Nanos blocked_at = thread.now();
  std::optional<HungCall> hung;
  while (!hung && thread.now() < blocked_at + 60s) hung = thread.look_after(500ms, 0ms, false);
  ASSERT_TRUE(hung);
  EXPECT_LE(thread.now() - blocked_at, kDefaultHungCallAfter + 500ms);
}

}  // namespace
}  // namespace wattwise::sampling
