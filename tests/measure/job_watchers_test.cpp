#include "measure/job_watchers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "../support/default_signals.hpp"
#include "../support/no_gpus.hpp"
#include "hw/gpu.hpp"
#include "measure/live_status.hpp"
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

// The time line of a broken source: every question to it throws.
class FailingClock final : public Clock {
 public:
  Nanos now() const override { throw std::runtime_error("the clock failed"); }
  void sleep_until(Nanos) override { throw std::runtime_error("the clock failed"); }
  Nanos realtime_offset() const override { return Nanos{0}; }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(JobWatchers, AWatcherThatThrowsEndsAloneAndTheOthersRunToTheJobsEnd) {
  MonotonicClock clock;
  sampling::Sampler sampler({}, clock);
  workload::MarkerReceiver receiver;
  const LiveJob job{sampler, receiver, clock, clock.now(), {}};
  std::atomic<bool> saw_the_end{false};
  const JobWatcher throws = [](const LiveJob&, const std::atomic<bool>&) {
    throw std::runtime_error("watcher broke");
  };
  const JobWatcher throws_anything = [](const LiveJob&, const std::atomic<bool>&) { throw 42; };
  const JobWatcher patient = [&](const LiveJob&, const std::atomic<bool>& ended) {
    while (!ended.load()) std::this_thread::sleep_for(1ms);
    saw_the_end = true;
  };
  // The first runs on the calling thread, the others on threads of their own: a throw from either kind
  // once ended the process (std::terminate) or skipped the joins.
  const JobWatcher together =
      watch_together({throws, patient, named_watcher("the odd one", throws_anything)});
  std::atomic<bool> ended{false};
  std::thread ender([&] {
    std::this_thread::sleep_for(200ms);
    ended = true;
  });
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(together(job, ended));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ender.join();
  EXPECT_TRUE(saw_the_end.load());
  EXPECT_TRUE(contains(err,
                       "wattwise: warning: a job watcher stopped: watcher broke; the job and its "
                       "measurement go on\n"))
      << err;
  EXPECT_TRUE(contains(err,
                       "wattwise: warning: the odd one stopped: an exception that is not a "
                       "std::exception"))
      << err;
}

TEST(JobWatchers, TheLiveStatusLineThatFailsStopsAloneAndSaysSo) {
  FailingClock clock;
  sampling::Sampler sampler({}, clock);
  workload::MarkerReceiver receiver;
  const LiveJob job{sampler, receiver, clock, Nanos{0}, {}};
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  const JobWatcher status = status_line_watcher(out, 10ms);
  std::atomic<bool> ended{false};
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(status(job, ended));
  const std::string err = ::testing::internal::GetCapturedStderr();
  std::fclose(out);
  EXPECT_TRUE(contains(err, "wattwise: warning: the live status line stopped: the clock failed")) << err;
}

using ::wattwise::testing::NoGpus;  // measure_command on a node without GPUs: only the job, its markers and its watcher

TEST(JobWatchers, AWatcherThatThrowsLeavesTheJobAndItsMeasurement) {
  wattwise::testing::default_stop_signals();
  NoGpus system;
  MeasureOptions options;
  std::atomic<bool> threw{false};
  options.while_job_runs = [&](const LiveJob&, const std::atomic<bool>&) {
    threw = true;
    throw std::runtime_error("watcher broke at the start");
  };
  ::testing::internal::CaptureStderr();
  const Measurement m = measure_command(system, {"/bin/sh", "-c", "sleep 0.3; exit 5"}, options);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(threw.load());
  EXPECT_EQ(m.outcome.exit_code, 5);  // the job ran to its own end
  EXPECT_GE(to_seconds(m.job_end - m.job_start), 0.29);
  EXPECT_TRUE(contains(err, "a job watcher stopped: watcher broke at the start")) << err;
}

TEST(JobWatchers, NoWatcherAtAllIsNoWatcher) {
  EXPECT_FALSE(watch_together({JobWatcher{}, JobWatcher{}}));
  EXPECT_FALSE(watch_together({}));
}

}  // namespace
}  // namespace wattwise::measure
