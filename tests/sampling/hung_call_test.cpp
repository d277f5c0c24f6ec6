// When a driver call is taken as hung (sampling/hung_call.hpp), with the thread's scheduling as a fake /proc
// says and a virtual clock: a thread blocked in the driver is given up once its call is older than the limit,
// a starved one is not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "core/clock.hpp"
#include "sampling/hung_call.hpp"
#include "../support/temp_dir.hpp"

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
    state_.run_queue_wait = *state_.run_queue_wait + waited;
    state_.runnable = runnable;
    return slot_.give_up_if_begun_by(clock_.now() - kDefaultHungCallAfter);
  }
  void enter() { slot_.enter(0, "energy_counter", clock_.now()); }
  bool leave() { return slot_.leave(); }
  Nanos now() const { return clock_.now(); }

 private:
  VirtualClock clock_{100s};
  ThreadScheduling state_{false, Nanos{0}};
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

// /proc/self/task/TID/ as a kernel may leave it: a thread may name itself anything (a ')' and a state
// letter included), and a kernel without CONFIG_SCHED_INFO has no schedstat.
ThreadScheduling read_task(const std::string& stat, const std::optional<std::string>& schedstat) {
  testing::TempDir dir;
  std::ofstream(dir / "stat") << stat;
  if (schedstat) std::ofstream(dir / "schedstat") << *schedstat;
  const auto scheduling = thread_scheduling(dir.path().string() + "/");
  if (!scheduling) throw std::runtime_error("no scheduling read from " + stat);
  return scheduling.value();
}

TEST(HungCall, AThreadsStateFollowsItsNameWhateverTheNameHolds) {
  const std::string rest = " 1 1 1 0 -1 4194560 0 0 0 0 3 1 0 0 20 0 2 0 100 0 0\n";
  EXPECT_TRUE(read_task("4242 (a) S (b) R" + rest, "12 34 5\n").runnable);
  EXPECT_FALSE(read_task("4242 (x) R) S" + rest, "12 34 5\n").runnable);
  EXPECT_FALSE(read_task("4242 (ww sampler) D" + rest, "12 34 5\n").runnable);
  EXPECT_EQ(read_task("4242 (ww) S" + rest, "12 34 5\n").run_queue_wait, Nanos{34});
}

TEST(HungCall, WithoutSchedstatTheStateStillSaysRunnable) {
  // Before, a missing schedstat lost the state too: a starved thread, runnable at the look, was judged by
  // its CPU time alone and given up.
  const std::string stat = "4242 (ww-sampler) R 1 1 1 0 -1 4194560 0 0 0 0 3 1 0 0 39 19 2 0 100 0 0\n";
  EXPECT_NO_THROW({
    const ThreadScheduling scheduling = read_task(stat, std::nullopt);
    EXPECT_TRUE(scheduling.runnable);
    EXPECT_FALSE(scheduling.run_queue_wait);
  });
  EXPECT_FALSE(read_task(stat, "garbage\n").run_queue_wait);
}

TEST(HungCall, AStarvedThreadWithoutSchedstatIsNotGivenUpWhileRunnable) {
  VirtualClock clock(100s);
  ThreadScheduling state{true, std::nullopt};
  CallSlot slot([&](const std::string&) { return std::optional(state); }, clock);
  slot.bind_this_thread();
  slot.enter(0, "energy_counter", clock.now());
  for (int i = 0; i < 20; ++i) {
    clock.advance(500ms);
    EXPECT_FALSE(slot.give_up_if_begun_by(clock.now() - kDefaultHungCallAfter)) << i;
  }
  state.runnable = false;  // asleep for good: blocked
  clock.advance(500ms);
  EXPECT_TRUE(slot.give_up_if_begun_by(clock.now() - kDefaultHungCallAfter));
}

}  // namespace
}  // namespace wattwise::sampling

namespace wattwise::sampling {
namespace {

TEST(HungCall, ThisThreadsTaskDirIsTheOneProcNamesForIt) {
  // Through /proc/thread-self: the same directory as /proc/self/task/gettid() where /proc is this PID
  // namespace's (here), and still this thread's where it is not (a container's /proc).
  const std::string dir = this_threads_task_dir();
  char resolved[PATH_MAX] = {}, expected[PATH_MAX] = {};
  ASSERT_NE(realpath(dir.c_str(), resolved), nullptr) << dir;
  const std::string self = "/proc/self/task/" + std::to_string(::gettid());
  ASSERT_NE(realpath(self.c_str(), expected), nullptr);
  EXPECT_STREQ(resolved, expected);
  std::string other_dir;
  std::thread([&] { other_dir = this_threads_task_dir(); }).join();
  EXPECT_NE(other_dir, dir) << "each thread has its own";
}

}  // namespace
}  // namespace wattwise::sampling
