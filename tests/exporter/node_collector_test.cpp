#include "exporter/node_collector.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "../support/fake_gpu.hpp"

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using wattwise::testing::FakeGpu;
using wattwise::testing::FakeGpuOptions;

constexpr double kPowerW = 250;

// The exporter's total over [t1, t2] against the GPU's true energy there. At each end the counter value
// in use can be one posting period (100 ms) old while the extension starts at the read: the physics allow
// kPowerW x 100 ms of difference, whatever the machine's load; constant power makes the extension exact.
constexpr double kToleranceJ = kPowerW * 0.1 + 1;

TEST(NodeCollector, EnergyTotalFollowsTheGpuAcrossADriverCounterReset) {
  MonotonicClock clock;
  const Nanos start = clock.now();
  FakeGpuOptions options;
  options.counter_reset_at = start + 1200ms;
  // The device has been up for 10 s: its counter is well above what it restarts from.
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, options, nullptr, start - 10s);
  CollectorOptions collector_options;
  collector_options.hostname = "node-a";
  collector_options.harvest_period = 100ms;
  NodeCollector collector({&gpu}, clock, collector_options);
  collector.start();
  std::this_thread::sleep_for(600ms);
  const Nanos t1 = clock.now();
  const double e1 = collector.snapshot().gpus.at(0).energy_j;
  std::this_thread::sleep_for(2s);
  const Nanos t2 = clock.now();
  const NodeSnapshot s2 = collector.snapshot();
  collector.stop();
  EXPECT_EQ(s2.gpus.at(0).counter_breaks, 1u);
  EXPECT_NEAR(s2.gpus.at(0).energy_j - e1, kPowerW * to_seconds(t2 - t1), kToleranceJ);
  EXPECT_EQ(s2.hostname, "node-a");
  EXPECT_TRUE(s2.gpus.at(0).up);
}

TEST(NodeCollector, ScrapesNeverSeeTheTotalGoDown) {
  MonotonicClock clock;
  // A square wave: the extension by held power overshoots at every falling edge.
  FakeGpu gpu(
      clock, [](Nanos t) { return (t % 300ms) < 150ms ? 600.0 : 50.0; }, {}, nullptr, clock.now() - 1s);
  CollectorOptions collector_options;
  collector_options.harvest_period = 50ms;
  NodeCollector collector({&gpu}, clock, collector_options);
  collector.start();
  double previous = 0;
  for (int i = 0; i < 150; ++i) {
    const double now_j = collector.snapshot().gpus.at(0).energy_j;
    ASSERT_GE(now_j, previous) << "scrape " << i;
    previous = now_j;
    std::this_thread::sleep_for(10ms);
  }
  collector.stop();
  EXPECT_GT(previous, 0);
}

TEST(NodeCollector, IsHealthyWhileRunningAndNotAfterStop) {
  MonotonicClock clock;
  // Its life starts a second ago (the fake integrates its counter from there).
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, {}, nullptr, clock.now() - 1s);
  NodeCollector collector({&gpu}, clock, CollectorOptions{});
  EXPECT_FALSE(collector.healthy());
  collector.start();
  EXPECT_TRUE(collector.healthy());
  collector.stop();
  EXPECT_FALSE(collector.healthy());
}

TEST(NodeCollector, MetricsTextCarriesTheDcgmStyleLabels) {
  MonotonicClock clock;
  // Its life starts a second ago (the fake integrates its counter from there).
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, {}, nullptr, clock.now() - 1s);
  CollectorOptions collector_options;
  collector_options.hostname = "node-b";
  NodeCollector collector({&gpu}, clock, collector_options);
  collector.start();
  std::this_thread::sleep_for(400ms);
  const std::string text = collector.metrics_text();
  collector.stop();
  const hw::GpuIdentity& id = gpu.identity();
  const std::string labels = "{gpu=\"" + std::to_string(id.index) + "\",UUID=\"" + id.uuid +
                             "\",pci_bus_id=\"" + id.pci_bus_id + "\",device=\"nvidia" +
                             std::to_string(id.index) + "\",modelName=\"" + id.name +
                             "\",Hostname=\"node-b\"}";
  EXPECT_NE(
      text.find("# TYPE wattwise_gpu_energy_joules_total counter\nwattwise_gpu_energy_joules_total" + labels),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE wattwise_gpu_energy_uncertainty_joules gauge\nwattwise_gpu_energy_uncertainty_joules" +
                      labels),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("wattwise_gpu_power_watts" + labels + " 250\n"), std::string::npos) << text;
  EXPECT_NE(text.find("wattwise_gpu_up" + labels + " 1\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace wattwise::exporter
