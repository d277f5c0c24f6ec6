#include "sampling/sampler_cost.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../support/fake_gpu.hpp"
#include "core/error.hpp"
#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;
using testing::FakeGpu;
using testing::FakeGpuOptions;

// Burns `cpu` of this thread's CPU time (the driver spins like this inside an H100's counter read).
void burn_thread_cpu(Nanos cpu) {
  const Nanos until = thread_cpu_time() + cpu;
  while (thread_cpu_time() < until) {
  }
}

struct CostRun {
  GpuSamplerCost cost;
  GpuTrace trace;
  std::vector<CounterScheduleStats> schedules;
};

CostRun run(Nanos duration, SamplerConfig config, Nanos spin = 0ns) {
  VirtualClock clock(0ns);
  FakeGpuOptions options;
  options.counter_read_cost = 4ms;
  // Its counter read spins for `spin` of CPU, and its PCIe throughput says 12 / 34 MB/s.
  FakeGpu gpu(
      clock, [](Nanos) { return 300.0; }, options, &clock, -5s);
  gpu.before_reading = [spin](const char* call) {
    if (std::string(call) == "energy") burn_thread_cpu(spin);
  };
  gpu.pcie_tx_mbps = 12;
  gpu.pcie_rx_mbps = 34;
  Sampler sampler({&gpu}, clock, config);
  VirtualDriver(sampler, clock).run_until(duration);
  CostRun result{sampler.cost().front(), sampler.take_traces().front(), {}};
  for (const CounterSchedule& schedule : sampler.counter_schedules())
    result.schedules.push_back(schedule.stats());
  return result;
}

TEST(SamplerCost, CountsEachCallKindPerGpu) {
  const CostRun r = run(10s, {});
  // Every counter read the schedule planned, begin()'s and finish()'s included, is one call of 4 ms.
  EXPECT_EQ(r.cost[GpuCall::kEnergyCounter].calls, r.schedules.front().reads);
  EXPECT_EQ(r.cost[GpuCall::kEnergyCounter].wall, 4ms * static_cast<std::int64_t>(r.schedules.front().reads));
  // The fast tick every 20 ms and the telemetry every 100 ms over 10 s (a counter read may push a tick
  // past its deadline, which is then skipped, never doubled).
  EXPECT_LE(r.cost[GpuCall::kPowerInstant].calls, 501u);
  EXPECT_GE(r.cost[GpuCall::kPowerInstant].calls, 450u);
  EXPECT_LE(r.cost[GpuCall::kTelemetry].calls, 101u);
  EXPECT_GE(r.cost[GpuCall::kTelemetry].calls, 90u);
  EXPECT_EQ(r.cost[GpuCall::kPowerAverage].calls, 0u) << "read only where there is no instantaneous power";
  EXPECT_GE(r.cost[GpuCall::kPowerSamples].calls, 20u) << "a drain every 0.5 s, and finish()'s";
  EXPECT_LE(r.cost[GpuCall::kPowerSamples].calls, 21u);
  EXPECT_EQ(r.cost.gpu_index, 0u);
}

TEST(SamplerCost, CountsWhereTheCounterReadsWent) {
  const CostRun r = run(30s, {});
  const CounterScheduleStats& c = r.cost.counter;
  EXPECT_EQ(c.reads, r.schedules.front().reads);
  EXPECT_EQ(c.learning_bursts, 1u) << "one burst at the start, none repeated on a quiet device";
  EXPECT_GT(c.learning_reads, 3u);
  EXPECT_LT(c.learning_reads, 30u);
  EXPECT_GT(c.relock_checks, 3u) << "0.5, 1, 2, 4, 8, 16 s after locking";
  EXPECT_EQ(c.relock_misses, 0u);
  EXPECT_EQ(c.blind_reads, 0u);
  ASSERT_TRUE(r.cost.posting_period.has_value());
  EXPECT_NEAR(to_seconds(*r.cost.posting_period), 0.1, 0.002);
}

TEST(SamplerCost, CpuTimeOfACallIsTheCallingThreadsCpu) {
  const Nanos spin = 2ms;
  const CostRun r = run(3s, {}, spin);
  const CallCost& counter = r.cost[GpuCall::kEnergyCounter];
  ASSERT_GT(counter.calls, 0u);
  // Thread CPU time counts only this thread's own work, so a loaded machine does not change the lower
  // bound; a preempted spin takes longer in wall time, never less CPU.
  EXPECT_GE(counter.cpu, spin * static_cast<std::int64_t>(counter.calls));
  EXPECT_GE(r.cost.cpu(), counter.cpu);
}

TEST(SamplerCost, PcieThroughputIsReadOnlyWhenAsked) {
  const CostRun without = run(5s, {});
  EXPECT_EQ(without.cost[GpuCall::kPcieThroughput].calls, 0u);
  for (const TelemetryReading& t : without.trace.telemetry) EXPECT_FALSE(t.values.pcie_tx_mbps.has_value());

  SamplerConfig asked;
  asked.pcie_period = 1s;
  const CostRun with = run(5s, asked);
  // At 0, 1, ..., 5 s; the readings in between carry the last values read.
  EXPECT_GE(with.cost[GpuCall::kPcieThroughput].calls, 5u);
  EXPECT_LE(with.cost[GpuCall::kPcieThroughput].calls, 6u);
  ASSERT_FALSE(with.trace.telemetry.empty());
  for (const TelemetryReading& t : with.trace.telemetry) {
    EXPECT_EQ(t.values.pcie_tx_mbps, 12.0);
    EXPECT_EQ(t.values.pcie_rx_mbps, 34.0);
  }
}

TEST(SamplerCost, APciePeriodUnderASecondIsAUsageError) {
  SamplerConfig config;
  config.pcie_period = 500ms;
  EXPECT_THROW(resolve_periods(config, 1), Error);
}

}  // namespace
}  // namespace wattwise::sampling
