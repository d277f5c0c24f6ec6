#include "measure/job_watchers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "sampling/sampler.hpp"
#include "workload/marker_receiver.hpp"

namespace wattwise::measure {
namespace {

using namespace std::chrono_literals;

TEST(JobWatchers, EveryWatcherRunsBesideTheOthersUntilTheJobEnds) {
  MonotonicClock clock;
  sampling::Sampler sampler({}, clock);
  workload::MarkerReceiver receiver;
  const LiveJob job{sampler, receiver, clock, clock.now(), {}};
  std::atomic<int> running{0};
  std::atomic<int> saw_both{0};
  // Each waits (bounded) until the other runs too: a sequential combinator would leave both unsatisfied.
  const JobWatcher watcher = [&](const LiveJob&, const std::atomic<bool>& ended) {
    ++running;
    const auto give_up = std::chrono::steady_clock::now() + 30s;
    while (running.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(1ms);
    if (running.load() == 2) ++saw_both;
    while (!ended.load()) std::this_thread::sleep_for(1ms);
  };
  const JobWatcher together = watch_together({watcher, JobWatcher{}, watcher});
  ASSERT_TRUE(together);
  std::atomic<bool> ended{false};
  std::thread ender([&] {
    const auto give_up = std::chrono::steady_clock::now() + 40s;  // a broken combinator fails, not hangs
    while (saw_both.load() < 2 && std::chrono::steady_clock::now() < give_up)
      std::this_thread::sleep_for(1ms);
    ended = true;
  });
  together(job, ended);  // returns only once both have returned
  ender.join();
  EXPECT_EQ(saw_both.load(), 2);
}

TEST(JobWatchers, NoWatcherAtAllIsNoWatcher) {
  EXPECT_FALSE(watch_together({JobWatcher{}, JobWatcher{}}));
  EXPECT_FALSE(watch_together({}));
}

}  // namespace
}  // namespace wattwise::measure
