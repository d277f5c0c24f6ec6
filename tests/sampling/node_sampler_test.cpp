// The node sampler: energy over windows from cumulative or power readings, failing sources, its thread.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>

#include "sampling/node_sampler.hpp"

namespace wattwise::sampling {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Readings handed out in order; when they run out, each read fails.
class ScriptedSource final : public hw::NodeSource {
 public:
  ScriptedSource(hw::NodeKind kind, std::deque<hw::NodeReading> readings, Nanos max_interval = Nanos::max())
      : kind_(kind), readings_(std::move(readings)), max_interval_(max_interval) {}
  std::string name() const override { return "scripted"; }
  hw::NodeKind kind() const override { return kind_; }
  std::string origin() const override { return "a script"; }
  Nanos max_read_interval() const override { return max_interval_; }
  hw::NodeReading read() override {
    ++reads;
    if (readings_.empty()) return {std::nullopt, std::nullopt, "no answer"};
    auto r = readings_.front();
    readings_.pop_front();
    return r;
  }
  int reads = 0;

 private:
  hw::NodeKind kind_;
  std::deque<hw::NodeReading> readings_;
  Nanos max_interval_;
};

NodeTrace trace_of(std::vector<NodeSample> samples) {
  NodeTrace t;
  t.samples = std::move(samples);
  return t;
}

TEST(NodeEnergy, CumulativeEnergyIsInterpolatedAtTheWindowEdges) {
  // 100 W: 0 J at 0 s, 100 J at 1 s, 200 J at 2 s.
  const auto t = trace_of({{seconds(0), 0.0, {}}, {seconds(1), 100.0, {}}, {seconds(2), 200.0, {}}});
  EXPECT_NEAR(*node_energy_j(t, milliseconds(500), milliseconds(1500)), 100.0, 1e-9);
  EXPECT_NEAR(*node_energy_j(t, seconds(0), seconds(2)), 200.0, 1e-9);
}

TEST(NodeEnergy, PowerIsIntegratedByTrapezoid) {
  // 100 W rising to 300 W over 2 s: 400 J; over the middle second, 200 W average.
  const auto t = trace_of({{seconds(0), {}, 100.0}, {seconds(1), {}, 200.0}, {seconds(2), {}, 300.0}});
  EXPECT_NEAR(*node_energy_j(t, seconds(0), seconds(2)), 400.0, 1e-9);
  EXPECT_NEAR(*node_energy_j(t, milliseconds(500), milliseconds(1500)), 200.0, 1e-9);
}

TEST(NodeEnergy, WindowOutsideTheReadingsIsAbsent) {
  const auto t = trace_of({{seconds(1), 10.0, {}}, {seconds(2), 20.0, {}}});
  EXPECT_FALSE(node_energy_j(t, seconds(0), seconds(2)));
  EXPECT_FALSE(node_energy_j(t, seconds(1), seconds(3)));
}

TEST(NodeEnergy, SourceGivenUpHasNoFigure) {
  auto t = trace_of({{seconds(0), 0.0, {}}, {seconds(2), 20.0, {}}});
  t.given_up = true;
  EXPECT_FALSE(node_energy_j(t, seconds(0), seconds(1)));
}

TEST(NodeSampler, EachReadIsStampedOnTheClock) {
  VirtualClock clock(seconds(10));
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(
      hw::NodeKind::kCpuPackage, std::deque<hw::NodeReading>{{5.0, {}, ""}, {7.0, {}, ""}}));
  NodeSampler sampler(std::move(sources), clock);
  sampler.read_all();
  clock.advance(seconds(1));
  sampler.read_all();
  const auto traces = sampler.take_traces();
  ASSERT_EQ(traces.at(0).samples.size(), 2u);
  EXPECT_EQ(traces[0].samples[1].t, seconds(11));
  EXPECT_EQ(traces[0].samples[1].energy_j, 7.0);
  EXPECT_EQ(traces[0].origin, "a script");
}

TEST(NodeSampler, SourceFailingThreeTimesInARowIsGivenUp) {
  VirtualClock clock;
  auto owned =
      std::make_unique<ScriptedSource>(hw::NodeKind::kMeter, std::deque<hw::NodeReading>{{{}, 200.0, ""}});
  ScriptedSource* source = owned.get();
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(std::move(owned));
  NodeSampler sampler(std::move(sources), clock);
  for (int i = 0; i < 6; ++i) sampler.read_all();
  EXPECT_EQ(source->reads, 1 + kNodeFailuresBeforeGivingUp);  // not read again once given up
  const auto traces = sampler.take_traces();
  EXPECT_TRUE(traces[0].given_up);
  EXPECT_EQ(traces[0].failed_readings, static_cast<std::uint64_t>(kNodeFailuresBeforeGivingUp));
  EXPECT_EQ(traces[0].first_error, "no answer");
}

TEST(NodeSampler, SingleFailureIsSpannedByTheNextReading) {
  VirtualClock clock;
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(
      hw::NodeKind::kMeter, std::deque<hw::NodeReading>{{0.0, {}, ""}, {{}, {}, "busy"}, {30.0, {}, ""}}));
  NodeSampler sampler(std::move(sources), clock);
  for (int i = 0; i < 3; ++i) {
    sampler.read_all();
    clock.advance(seconds(1));
  }
  const auto traces = sampler.take_traces();
  EXPECT_FALSE(traces[0].given_up);
  EXPECT_EQ(traces[0].failed_readings, 1u);
  EXPECT_NEAR(*node_energy_j(traces[0], seconds(0), seconds(2)), 30.0, 1e-9);
}

// A cumulative meter whose count goes backwards (reset, or a script that lost its state) was differenced
// across the drop: 800 J then 100 J gave a silent figure. Now the lower count is a failed reading that says
// so: a window it would end has no figure, and one before it keeps its own.
TEST(NodeSampler, ACumulativeCountThatGoesBackwardsIsAFailedReadingThatSaysSo) {
  VirtualClock clock;
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(
      hw::NodeKind::kMeter,
      std::deque<hw::NodeReading>{{100.0, {}, ""}, {500.0, {}, ""}, {800.0, {}, ""}, {100.0, {}, ""}}));
  NodeSampler sampler(std::move(sources), clock);
  for (int i = 0; i < 4; ++i) {
    sampler.read_all();
    clock.advance(seconds(1));
  }
  const auto traces = sampler.take_traces();
  EXPECT_EQ(traces[0].failed_readings, 1u);
  EXPECT_NE(traces[0].first_error.find("went backwards (800 J, then 100 J)"), std::string::npos)
      << traces[0].first_error;
  EXPECT_FALSE(node_energy_j(traces[0], seconds(0), seconds(3)).has_value());
  EXPECT_NEAR(*node_energy_j(traces[0], seconds(0), seconds(2)), 700.0, 1e-9);
}

TEST(NodeSampler, PeriodShrinksSoThatNoCounterWrapsTwiceUnseen) {
  VirtualClock clock;
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(
      std::make_unique<ScriptedSource>(hw::NodeKind::kCpuPackage, std::deque<hw::NodeReading>{}, seconds(1)));
  NodeSampler sampler(std::move(sources), clock, seconds(5));
  EXPECT_EQ(sampler.period(), milliseconds(500));
}

TEST(NodeSampler, ThreadReadsAtStartEveryPeriodAndAtStop) {
  MonotonicClock clock;
  std::deque<hw::NodeReading> readings;
  for (int i = 0; i < 1000; ++i) readings.push_back({static_cast<double>(i), {}, ""});
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  sources.push_back(std::make_unique<ScriptedSource>(hw::NodeKind::kDram, readings));
  NodeSampler sampler(std::move(sources), clock, milliseconds(20));
  const Nanos before = clock.now();
  sampler.start();
  std::this_thread::sleep_for(milliseconds(200));
  sampler.stop();
  const Nanos after = clock.now();
  const auto traces = sampler.take_traces();
  const auto& samples = traces.at(0).samples;
  ASSERT_GE(samples.size(), 5u);  // ~11 expected; a loaded CI machine may miss some ticks
  EXPECT_GE(samples.front().t, before);
  EXPECT_LE(samples.back().t, after);
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i].t, samples[i - 1].t);
}

}  // namespace
}  // namespace wattwise::sampling
