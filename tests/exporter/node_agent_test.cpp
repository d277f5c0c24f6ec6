#include "exporter/node_agent.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "../sampling/fake_gpu.hpp"

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using sampling::testing::FakeGpu;
using sampling::testing::FakeGpuOptions;

constexpr double kPowerW = 250;

// The exporter's total over [t1, t2] against the GPU's true energy there. At each end the counter value
// in use can be one posting period (100 ms) old while the extension starts at the read: the physics allow
// kPowerW x 100 ms of difference, whatever the machine's load; constant power makes the extension exact.
constexpr double kToleranceJ = kPowerW * 0.1 + 1;

TEST(NodeAgent, EnergyTotalFollowsTheGpuAcrossADriverCounterReset) {
  MonotonicClock clock;
  const Nanos start = clock.now();
  FakeGpuOptions options;
  options.counter_reset_at = start + 1200ms;
  // The device has been up for 10 s: its counter is well above what it restarts from.
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, options, nullptr, start - 10s);
  AgentOptions agent_options;
  agent_options.hostname = "node-a";
  agent_options.harvest_period = 100ms;
  NodeAgent agent({&gpu}, clock, agent_options);
  agent.start();
  std::this_thread::sleep_for(600ms);
  const Nanos t1 = clock.now();
  const double e1 = agent.snapshot().gpus.at(0).energy_j;
  std::this_thread::sleep_for(2s);
  const Nanos t2 = clock.now();
  const NodeSnapshot s2 = agent.snapshot();
  agent.stop();
  EXPECT_EQ(s2.gpus.at(0).counter_breaks, 1u);
  EXPECT_NEAR(s2.gpus.at(0).energy_j - e1, kPowerW * to_seconds(t2 - t1), kToleranceJ);
  EXPECT_EQ(s2.hostname, "node-a");
  EXPECT_TRUE(s2.gpus.at(0).up);
}

TEST(NodeAgent, ScrapesNeverSeeTheTotalGoDown) {
  MonotonicClock clock;
  // A square wave: the extension by held power overshoots at every falling edge.
  FakeGpu gpu(
      clock, [](Nanos t) { return (t % 300ms) < 150ms ? 600.0 : 50.0; }, {}, nullptr, clock.now() - 1s);
  AgentOptions agent_options;
  agent_options.harvest_period = 50ms;
  NodeAgent agent({&gpu}, clock, agent_options);
  agent.start();
  double previous = 0;
  for (int i = 0; i < 150; ++i) {
    const double now_j = agent.snapshot().gpus.at(0).energy_j;
    ASSERT_GE(now_j, previous) << "scrape " << i;
    previous = now_j;
    std::this_thread::sleep_for(10ms);
  }
  agent.stop();
  EXPECT_GT(previous, 0);
}

TEST(NodeAgent, IsHealthyWhileRunningAndNotAfterStop) {
  MonotonicClock clock;
  // Its life starts a second ago (the fake integrates its counter from there).
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, {}, nullptr, clock.now() - 1s);
  NodeAgent agent({&gpu}, clock, AgentOptions{});
  EXPECT_FALSE(agent.healthy());
  agent.start();
  EXPECT_TRUE(agent.healthy());
  agent.stop();
  EXPECT_FALSE(agent.healthy());
}

TEST(NodeAgent, MetricsTextCarriesTheDcgmStyleLabels) {
  MonotonicClock clock;
  // Its life starts a second ago (the fake integrates its counter from there).
  FakeGpu gpu(
      clock, [](Nanos) { return kPowerW; }, {}, nullptr, clock.now() - 1s);
  AgentOptions agent_options;
  agent_options.hostname = "node-b";
  NodeAgent agent({&gpu}, clock, agent_options);
  agent.start();
  std::this_thread::sleep_for(400ms);
  const std::string text = agent.metrics_text();
  agent.stop();
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
