// ThreadedDriver::every: a reader (the exporter) takes the sampler's readings on the sampling thread while
// sampling goes on.
#include <gtest/gtest.h>

#include <thread>

#include "../support/fake_gpu.hpp"
#include "core/error.hpp"
#include "sampling/sampler.hpp"
#include "sampling/threaded_driver.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

TEST(ThreadedDriverHook, RunsOnTheSamplingThreadAndTakingTracesThereLosesNoReading) {
  MonotonicClock clock;
  testing::FakeGpu gpu(
      clock, [](Nanos) { return 200.0; }, {}, nullptr, clock.now() - 1s);
  Sampler sampler({&gpu}, clock);
  ThreadedDriver driver(sampler, clock);
  std::vector<CounterReading> counter;
  std::vector<PowerReading> instant;
  int calls = 0;
  std::thread::id hook_thread;
  driver.every(50ms, [&](Nanos) {
    ++calls;
    hook_thread = std::this_thread::get_id();
    GpuTrace chunk = std::move(sampler.take_traces().front());
    counter.insert(counter.end(), chunk.energy.begin(), chunk.energy.end());
    instant.insert(instant.end(), chunk.power_instant.begin(), chunk.power_instant.end());
  });
  driver.start();
  std::this_thread::sleep_for(600ms);
  driver.stop();
  GpuTrace rest = std::move(sampler.take_traces().front());
  counter.insert(counter.end(), rest.energy.begin(), rest.energy.end());
  instant.insert(instant.end(), rest.power_instant.begin(), rest.power_instant.end());

  EXPECT_GE(calls, 2);  // ~12 at 50 ms; a loaded machine may delay the thread, never skip all of them
  EXPECT_NE(hook_thread, std::this_thread::get_id());
  // Every reading arrives exactly once and in order across the harvests: the counter reads (begin's, the
  // schedule's, finish's) and the 20 ms power readings.
  ASSERT_GE(counter.size(), 3u);
  EXPECT_EQ(static_cast<int>(counter.size()), gpu.counter_reads());
  for (std::size_t i = 1; i < counter.size(); ++i) EXPECT_LT(counter[i - 1].t, counter[i].t);
  ASSERT_GE(instant.size(), 5u);
  for (std::size_t i = 1; i < instant.size(); ++i) EXPECT_LT(instant[i - 1].t, instant[i].t);
}

TEST(ThreadedDriverHook, CannotBeSetWhileRunning) {
  MonotonicClock clock;
  testing::FakeGpu gpu(
      clock, [](Nanos) { return 200.0; }, {}, nullptr, clock.now() - 1s);
  Sampler sampler({&gpu}, clock);
  ThreadedDriver driver(sampler, clock);
  driver.start();
  EXPECT_THROW(driver.every(50ms, [](Nanos) {}), Error);
  driver.stop();
}

}  // namespace
}  // namespace wattwise::sampling
