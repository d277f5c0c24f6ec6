#include "sampling/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include "../support/fake_gpu.hpp"
#include "core/error.hpp"
#include "sampling/threaded_driver.hpp"
#include "sampling/virtual_driver.hpp"
#include "simulate.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;
using testing::FakeGpu;
using testing::FakeGpuOptions;

testing::PowerFunction constant_w(double watts) {
  return [watts](Nanos) { return watts; };
}

// Virtual time whose wall clock (CLOCK_REALTIME) runs `offset` ahead of it; a test may step it.
class RealtimeAheadClock final : public Clock {
 public:
  explicit RealtimeAheadClock(VirtualClock& base) : base_(base) {}
  Nanos now() const override { return base_.now(); }
  void sleep_until(Nanos t) override { base_.sleep_until(t); }
  Nanos realtime_offset() const override { return offset; }
  Nanos offset = 1000s;

 private:
  VirtualClock& base_;
};

// The fixed cadences (and the counter at a fixed --counter-interval), every reading kept.
SamplerConfig fixed_counter(Nanos period) {
  SamplerConfig config;
  config.counter_period = period;
  config.drop_repeated_readings = false;
  config.drop_repeated_instant_and_telemetry = false;
  return config;
}

TEST(Sampler, VirtualDriverTicksExactlyAtStartPlusKPeriods) {
  VirtualClock clock(7s);
  FakeGpu gpu(clock, constant_w(300), {}, &clock, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  VirtualDriver(sampler, clock).run_until(7s + 2s);
  const GpuTrace trace = sampler.take_traces().front();

  ASSERT_EQ(trace.power_instant.size(), 101u);  // 0, 20, ..., 2000 ms
  for (std::size_t k = 0; k < trace.power_instant.size(); ++k) {
    EXPECT_EQ(trace.power_instant[k].t, 7s + 20ms * static_cast<std::int64_t>(k));
  }
  // begin() reads at the start, then one read per 10 ms, then finish() reads again at the end.
  ASSERT_EQ(trace.energy.size(), 202u);
  for (std::size_t k = 0; k + 1 < trace.energy.size(); ++k) {
    EXPECT_EQ(trace.energy[k].t, 7s + 10ms * static_cast<std::int64_t>(k));
  }
  ASSERT_EQ(trace.telemetry.size(), 21u);  // its own, slower cadence: 0, 100, ..., 2000 ms
  for (std::size_t k = 0; k < trace.telemetry.size(); ++k) {
    EXPECT_EQ(trace.telemetry[k].t, 7s + 100ms * static_cast<std::int64_t>(k));
  }
}

TEST(Sampler, DrainsBufferedSamplesOntoTheMonotonicTimeLine) {
  // A clock whose wall time is 1000 s ahead: device stamps must be mapped back by that offset.
  VirtualClock clock(0s);
  RealtimeAheadClock ahead(clock);
  FakeGpu gpu(ahead, constant_w(200), {}, nullptr, -5s);
  Sampler sampler({&gpu}, ahead, fixed_counter(10ms));
  VirtualDriver(sampler, clock).run_until(3s);
  const GpuTrace trace = sampler.take_traces().front();

  ASSERT_EQ(trace.power_samples.size(), 150u);  // one per 20 ms, none from before the start
  for (std::size_t k = 0; k < trace.power_samples.size(); ++k) {
    EXPECT_EQ(trace.power_samples[k].t, 20ms * static_cast<std::int64_t>(k + 1));
    EXPECT_NEAR(trace.power_samples[k].power_w, 200, 1e-6);
  }
  EXPECT_EQ(sampler.late_drains(), 0u);
}

// A drain later than the device's buffer holds (2.4 s): the samples between were dropped, and the trace says
// where, from the last sample one drain saw to the first the next found (EnergyAccounting widens the bars of
// windows that begin or end there). Drains in time leave no gap.
TEST(Sampler, ALateDrainKeepsWhereTheSamplesWereDropped) {
  VirtualClock clock(0s);
  FakeGpu gpu(clock, constant_w(200), {}, nullptr, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  sampler.begin(clock.now());
  for (const Nanos at : {Nanos{1s}, Nanos{2s}, Nanos{4300ms}, Nanos{8300ms}}) {  // the last one 4 s late
    clock.sleep_until(at);
    sampler.drain_samples(clock.now());
  }
  EXPECT_EQ(sampler.late_drains(), 1u);
  const GpuTrace trace = sampler.take_traces().front();
  ASSERT_EQ(trace.sample_gaps.size(), 1u);
  const SampleGap gap = trace.sample_gaps.front();
  EXPECT_EQ(gap.after, 4300ms);
  EXPECT_GE(gap.before, 8300ms - 2400ms);  // the oldest sample the buffer still held
  EXPECT_LE(gap.before, 8300ms - 2400ms + 20ms);
  for (const PowerReading& sample : trace.power_samples)
    EXPECT_TRUE(sample.t <= gap.after || sample.t >= gap.before) << sample.t.count();
}

// A failed drain drains nothing: the next one is late by the time since the last drain that succeeded
// (1 s to 4.5 s here, the failed one at 2.5 s), and the samples dropped meanwhile are a gap.
TEST(Sampler, ADrainLateSinceTheLastOneThatSucceededKeepsItsGap) {
  VirtualClock clock(0s);
  FakeGpu gpu(clock, constant_w(200), {}, nullptr, 0s);
  bool fail = false;
  gpu.before_reading = [&](const char* call) {
    if (fail && std::string(call) == "samples") throw std::runtime_error("NVML_ERROR_UNKNOWN");
  };
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  sampler.begin(clock.now());
  for (const Nanos at : {Nanos{1s}, Nanos{2500ms}, Nanos{4500ms}}) {
    clock.sleep_until(at);
    fail = at == 2500ms;
    sampler.drain_samples(clock.now());
  }
  const GpuTrace trace = sampler.take_traces().front();
  ASSERT_EQ(trace.sample_gaps.size(), 1u);
  EXPECT_EQ(trace.sample_gaps.front().after, 1s);
  EXPECT_GE(trace.sample_gaps.front().before, 4500ms - 2400ms);
}

// The exporter takes the traces every fraction of a second while sampling goes on: a late drain after a take
// is as late as before it, and its gap goes with the next take.
TEST(Sampler, TakingTheTracesKeepsWhenTheSamplesWereLastDrained) {
  VirtualClock clock(0s);
  FakeGpu gpu(clock, constant_w(200), {}, nullptr, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  sampler.begin(clock.now());
  clock.sleep_until(1s);
  sampler.drain_samples(clock.now());
  clock.sleep_until(2s);
  EXPECT_TRUE(sampler.take_traces().front().sample_gaps.empty());
  clock.sleep_until(4500ms);
  sampler.drain_samples(clock.now());
  const GpuTrace trace = sampler.take_traces().front();
  ASSERT_EQ(trace.sample_gaps.size(), 1u);
  EXPECT_EQ(trace.sample_gaps.front().after, 1s);
}

// A drain later than 2.4 s finds no samples dropped where the buffer holds more (or the drain came just late
// enough that the oldest one left is the next): no gap, and the GPU is not said to be starved for it.
TEST(Sampler, ALateDrainThatLostNoSampleLeavesNoGap) {
  VirtualClock clock(0s);
  FakeGpuOptions options;
  options.buffer_span = 6s;
  FakeGpu gpu(clock, constant_w(200), options, nullptr, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  sampler.begin(clock.now());
  for (const Nanos at : {Nanos{1s}, Nanos{5s}}) {
    clock.sleep_until(at);
    sampler.drain_samples(clock.now());
  }
  const GpuTrace trace = sampler.take_traces().front();
  EXPECT_TRUE(trace.sample_gaps.empty());
  EXPECT_EQ(trace.power_samples.size(), 250u);  // every 20 ms sample up to 5 s
}

// CLOCK_REALTIME stepped back 0.5 s between two drains, the second one late: the gap begins where the last
// sample before it lies on the samples' time line (mapped with the offset of its own drain), not where the
// new offset would put that sample's stamp (0.5 s later, leaving 1.0-1.5 s, held by the next sample, outside).
TEST(Sampler, AGapBeginsAtTheLastSampleAsRecordedThoughTheClockWasSteppedSince) {
  VirtualClock clock(0s);
  RealtimeAheadClock stepped(clock);
  FakeGpu gpu(stepped, constant_w(200), {}, nullptr, 0s);
  Sampler sampler({&gpu}, stepped, fixed_counter(10ms));
  sampler.begin(clock.now());
  clock.sleep_until(1s);
  sampler.drain_samples(clock.now());
  stepped.offset = 1000s - 500ms;
  clock.sleep_until(4500ms);
  sampler.drain_samples(clock.now());
  const GpuTrace trace = sampler.take_traces().front();
  ASSERT_EQ(trace.sample_gaps.size(), 1u);
  EXPECT_EQ(trace.sample_gaps.front().after, 1s);
  const auto first_after = std::find_if(trace.power_samples.begin(), trace.power_samples.end(),
                                        [](const PowerReading& r) { return r.t > 1s; });
  ASSERT_NE(first_after, trace.power_samples.end());
  EXPECT_EQ(trace.sample_gaps.front().before, first_after->t);
}

TEST(Sampler, FixedCounterReadsOfEightGpusTakeTurnsOverThePeriod) {
  VirtualClock clock(0s);
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  std::vector<hw::GpuReadings*> pointers;
  for (int i = 0; i < 8; ++i) {
    gpus.push_back(std::make_unique<FakeGpu>(clock, constant_w(100), FakeGpuOptions{}, nullptr, 0s));
    pointers.push_back(gpus.back().get());
  }
  Sampler sampler(pointers, clock, fixed_counter(24ms));
  EXPECT_EQ(sampler.periods().counter_per_gpu, 24ms);
  EXPECT_FALSE(sampler.periods().counter_phase_locked);
  VirtualDriver(sampler, clock).run_until(1200ms);
  const std::vector<GpuTrace> traces = sampler.take_traces();
  for (std::size_t g = 0; g < traces.size(); ++g) {
    const auto& readings = traces[g].energy;
    ASSERT_GT(readings.size(), 45u);
    // Between begin() and finish(), GPU g is read at 3 ms * g + 24 ms * k: the GPUs take turns.
    for (std::size_t k = 1; k + 1 < readings.size(); ++k) {
      EXPECT_EQ((readings[k].t - 3ms * static_cast<std::int64_t>(g)) % 24ms, 0ms) << "gpu " << g;
      if (k > 1) {
        EXPECT_EQ(readings[k].t - readings[k - 1].t, 24ms) << "gpu " << g;
      }
    }
  }
}

TEST(Sampler, DefaultCounterReadsAreLockedToEachGpusOwnPostings) {
  VirtualClock clock(0s);
  std::vector<std::unique_ptr<FakeGpu>> gpus;
  std::vector<hw::GpuReadings*> pointers;
  for (int i = 0; i < 8; ++i) {
    FakeGpuOptions options;
    options.counter_update_phase = 11ms * i + 3ms;
    options.counter_read_cost = 4ms;  // advances the shared clock: reads of different GPUs collide
    gpus.push_back(std::make_unique<FakeGpu>(clock, constant_w(100 + 10 * i), options, &clock, 0s));
    pointers.push_back(gpus.back().get());
  }
  Sampler sampler(pointers, clock);
  EXPECT_TRUE(sampler.periods().counter_phase_locked);
  VirtualDriver(sampler, clock).run_until(20s);
  const std::vector<GpuTrace> traces = sampler.take_traces();
  for (std::size_t g = 0; g < traces.size(); ++g) {
    const CounterSchedule& schedule = sampler.counter_schedules()[g];
    EXPECT_EQ(schedule.mode(), CounterSchedule::Mode::kLocked) << "gpu " << g;
    ASSERT_TRUE(schedule.grid()) << "gpu " << g;
    Nanos off = (schedule.grid()->phase - (11ms * static_cast<std::int64_t>(g) + 3ms)) % 100ms;
    if (off < 0ms) off += 100ms;
    EXPECT_LE(std::min(off, 100ms - off), kLockedUncertainty) << "gpu " << g;
    // ~2 a second, plus learning, lock checks and the odd relearning when reads of GPUs collide.
    EXPECT_LT(static_cast<double>(traces[g].energy.size()) / 20.0, 4.5) << "reads a second, gpu " << g;
    EXPECT_LE(schedule.relock_misses(), 3u) << "gpu " << g;
  }
}

TEST(Sampler, RecordsTheCostOfEachCounterRead) {
  VirtualClock clock(0s);
  FakeGpuOptions options;
  options.counter_read_cost = 2700us;
  FakeGpu gpu(clock, constant_w(100), options, &clock, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  VirtualDriver(sampler, clock).run_until(500ms);
  const GpuTrace trace = sampler.take_traces().front();
  ASSERT_GT(trace.energy.size(), 40u);
  for (const CounterReading& r : trace.energy) EXPECT_EQ(r.read_cost, 2700us);
  // Reads start on the 10 ms grid although each took 2.7 ms (no drift).
  for (std::size_t k = 1; k + 1 < trace.energy.size(); ++k) {
    EXPECT_EQ((trace.energy[k].t - trace.energy[k].read_cost) % 10ms, 0ms);
  }
}

TEST(Sampler, OverrunningReadsSkipMissedTicksInsteadOfBursting) {
  VirtualClock clock(0s);
  FakeGpuOptions options;
  options.counter_read_cost = 25ms;  // longer than two 10 ms periods
  FakeGpu gpu(clock, constant_w(100), options, &clock, 0s);
  Sampler sampler({&gpu}, clock, fixed_counter(10ms));
  VirtualDriver(sampler, clock).run_until(1s);
  const GpuTrace trace = sampler.take_traces().front();
  for (std::size_t k = 3; k + 1 < trace.energy.size(); ++k) {  // 1: late after begin()
    const Nanos start = trace.energy[k].t - trace.energy[k].read_cost;
    const Nanos previous_start = trace.energy[k - 1].t - trace.energy[k - 1].read_cost;
    EXPECT_EQ(start % 10ms, 0ms);
    EXPECT_EQ(start - previous_start, 30ms);  // the next free slot after a 25 ms read, never back to back
  }
}

TEST(Sampler, IntervalsBelowTheHardwareFloorsAreUsageErrors) {
  VirtualClock clock(0s);
  FakeGpu a(clock, constant_w(100)), b(clock, constant_w(100));
  auto expect_usage_error = [&](SamplerConfig config, const std::string& minimum) {
    try {
      Sampler sampler({&a, &b}, clock, config);
      FAIL() << "no error for minimum " << minimum;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUsage);
      EXPECT_NE(std::string(e.what()).find(minimum), std::string::npos) << e.what();
    }
  };
  expect_usage_error(SamplerConfig{.counter_period = std::nullopt, .fast_period = 500us}, "at least 1 ms");
  expect_usage_error(SamplerConfig{.counter_period = 5ms}, "at least 6 ms");
  expect_usage_error(SamplerConfig{.counter_period = std::nullopt, .fast_period = 20ms, .drain_period = 2s},
                     "1000 ms");
  EXPECT_NO_THROW(Sampler({&a, &b}, clock, SamplerConfig{.counter_period = 6ms, .fast_period = 1ms}));
  SamplerConfig every_posting;
  every_posting.postings_per_read = 0;
  expect_usage_error(every_posting, "use 1 to 20");
  every_posting.postings_per_read = 21;
  expect_usage_error(every_posting, "use 1 to 20");
}

TEST(Sampler, VirtualDriverInterleavesJobEventsAndStopsWhenTheJobEnds) {
  VirtualClock clock(0s);
  FakeGpu gpu(clock, constant_w(100), {}, nullptr, 0s);
  Sampler sampler({&gpu}, clock);
  std::vector<Nanos> seen;
  Nanos next = 35ms;
  SimulatedJob job{[&]() -> std::optional<Nanos> {
                     if (seen.size() == 20) return std::nullopt;
                     return next;
                   },
                   [&](Nanos now) {
                     seen.push_back(now);
                     next += 35ms;
                   }};
  const Nanos stopped = VirtualDriver(sampler, clock).run_until(1h, job);
  ASSERT_EQ(seen.size(), 20u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 35ms * static_cast<std::int64_t>(i + 1));
  EXPECT_EQ(stopped, 700ms);
  EXPECT_EQ(sampler.take_traces().front().energy.back().t, 700ms);
}

TEST(Sampler, ThreadedDriverSmokeTest) {
  MonotonicClock clock;
  FakeGpu gpu(clock, constant_w(150), {}, nullptr, clock.now() - 3s);
  Sampler sampler({&gpu}, clock);
  {
    ThreadedDriver driver(sampler, clock);
    driver.start();
    std::this_thread::sleep_for(300ms);
    driver.stop();
  }
  const GpuTrace trace = sampler.take_traces().front();
  // Only what cannot flake on a loaded machine: reads happened and time moves forward.
  EXPECT_GE(trace.energy.size(), 2u);
  EXPECT_GE(trace.power_instant.size(), 1u);
  auto increasing = [](const auto& readings) {
    for (std::size_t i = 1; i < readings.size(); ++i) {
      if (!(readings[i - 1].t < readings[i].t)) return false;
    }
    return true;
  };
  EXPECT_TRUE(increasing(trace.energy));
  EXPECT_TRUE(increasing(trace.power_instant));
  EXPECT_TRUE(increasing(trace.power_samples));
  EXPECT_FALSE(trace.power_samples.empty());
}

}  // namespace
}  // namespace wattwise::sampling
