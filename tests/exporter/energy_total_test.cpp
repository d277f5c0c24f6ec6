#include "exporter/energy_total.hpp"

#include <gtest/gtest.h>

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using sampling::CounterReading;
using sampling::GpuTrace;
using sampling::PowerReading;

Nanos ms(std::int64_t v) {
  return std::chrono::milliseconds(v);
}

GpuTrace counters(std::initializer_list<std::pair<std::int64_t, std::uint64_t>> reads_ms_mj) {
  GpuTrace trace;
  for (const auto& [t, mj] : reads_ms_mj) trace.energy.push_back(CounterReading{ms(t), 0ns, mj});
  return trace;
}

// 300 W read every 100 ms from 600 ms; the driver reloaded at ~700 ms: its counter restarted near zero.
GpuTrace reset_at_700ms() {
  GpuTrace trace = counters({{0, 9'000'000}, {500, 9'150'000}});
  trace.power_instant = {{ms(600), 300}, {ms(700), 300}, {ms(800), 300}, {ms(900), 300}, {ms(1000), 300}};
  trace.energy.push_back(CounterReading{ms(1000), 0ns, 90'000});
  trace.energy.push_back(CounterReading{ms(1500), 0ns, 240'000});
  return trace;
}

TEST(EnergyTotal, IsZeroBeforeAnyReading) {
  EnergyTotal total;
  EXPECT_EQ(total.joules_at(ms(1000)), 0);
}

TEST(EnergyTotal, IsTheCounterDifferenceSinceTheFirstRead) {
  EnergyTotal total;
  total.add(counters({{0, 5'000'000}, {500, 5'150'000}}));
  total.add(counters({{1000, 5'300'000}}));
  // No power readings: nothing to extend with, so the total is exactly the counter's difference.
  EXPECT_DOUBLE_EQ(total.joules_at(ms(1000)), 300.0);
}

TEST(EnergyTotal, ExtendsBetweenCounterReadsByThePowerReadings) {
  EnergyTotal total;
  GpuTrace trace = counters({{0, 1'000'000}, {500, 1'100'000}});
  // 200 W samples after the last counter read, then instantaneous power beyond the samples.
  trace.power_samples = {{ms(520), 200}, {ms(540), 200}, {ms(560), 200}};
  trace.power_instant = {{ms(400), 999}, {ms(600), 300}, {ms(700), 300}};
  total.add(trace);
  // 100 J counter + 60 ms x 200 W + 140 ms x 300 W, then 300 W held 100 ms to the scrape at 800 ms.
  EXPECT_NEAR(total.joules_at(ms(800)), 100 + 12 + 42 + 30, 1e-9);
}

TEST(EnergyTotal, HoldsTheLastPowerForAtMostOneSecond) {
  EnergyTotal total;
  GpuTrace trace = counters({{0, 0}, {500, 100'000}});
  trace.power_instant = {{ms(600), 200}};
  total.add(trace);
  // 100 J + 100 ms x 200 W + at most kMaxPowerHold (1 s) x 200 W, however late the scrape.
  EXPECT_NEAR(total.joules_at(ms(60'000)), 100 + 20 + 200, 1e-9);
}

TEST(EnergyTotal, NeverGoesBackwardsWhenTheCounterComesInBelowTheEstimate) {
  EnergyTotal total;
  GpuTrace first = counters({{0, 0}, {500, 100'000}});
  first.power_instant = {{ms(600), 400}, {ms(700), 400}, {ms(800), 400}, {ms(900), 400}};
  total.add(first);
  const double served = total.joules_at(ms(1000));  // 100 + 4 x 40 + 40 held = 300 J
  EXPECT_NEAR(served, 300, 1e-9);
  // The load had dropped: the counter says only 150 J by 1000 ms.
  GpuTrace second = counters({{1000, 150'000}});
  total.add(second);
  EXPECT_EQ(total.joules_at(ms(1000)), served);
  EXPECT_EQ(total.joules_at(ms(1001)), served);
  // Once the truth passes what was served, the total follows it again.
  total.add(counters({{1500, 400'000}}));
  EXPECT_DOUBLE_EQ(total.joules_at(ms(1500)), 400);
}

TEST(EnergyTotal, BridgesACounterResetWithThePowerReadingsInBetween) {
  EnergyTotal total;
  total.add(reset_at_700ms());
  // 150 J + 500 ms x 300 W across the break + 150 J after it; never the negative difference.
  EXPECT_NEAR(total.joules_at(ms(1500)), 150 + 150 + 150, 1e-9);
  EXPECT_EQ(total.counter_breaks(), 1u);
}

TEST(EnergyTotal, IgnoresSamplesDrainedAfterTheCounterCoveredThem) {
  EnergyTotal total;
  total.add(counters({{0, 0}, {500, 100'000}}));
  GpuTrace late;
  late.power_samples = {{ms(300), 5000}, {ms(480), 5000}};  // older than the last counter read
  total.add(late);
  EXPECT_DOUBLE_EQ(total.joules_at(ms(500)), 100);
}

TEST(EnergyTotal, CounterReadsArePlacedOnTheirPostings) {
  sampling::PostingGrid grid;
  grid.phase = 3700us;
  grid.period = 100ms;
  std::vector<CounterReading> reads = {{ms(105), 0ns, 1}, {ms(299), 0ns, 2}, {ms(304), 0ns, 3}};
  place_counter_reads_on_postings(reads, grid);
  EXPECT_EQ(reads[0].t, 103700us);
  EXPECT_EQ(reads[1].t, 203700us);
  EXPECT_EQ(reads[2].t, 303700us);
}

TEST(EnergyTotal, ExtensionStartsAtThePostingOfTheLastValue) {
  // Constant 200 W; the counter posts at 0, 100, 200 ms... and is read 80 ms after a posting. Placed on
  // its posting, the value plus the power since then is exactly the energy at the scrape.
  sampling::PostingGrid grid;
  grid.period = 100ms;
  GpuTrace trace = counters({{80, 0}, {580, 100'000}});  // posted at 0 and 500 ms: 500 ms x 200 W
  trace.power_instant = {{ms(600), 200}, {ms(700), 200}};
  place_counter_reads_on_postings(trace.energy, grid);
  EnergyTotal total;
  total.add(trace);
  EXPECT_NEAR(total.joules_at(ms(750)), 0.75 * 200, 1e-9);
}

TEST(EnergyTotal, IntegratesPowerOnAGpuWithoutACounter) {
  EnergyTotal total;
  GpuTrace first;
  first.power_instant = {{ms(0), 100}, {ms(100), 100}, {ms(200), 100}};
  total.add(first);
  GpuTrace second;
  second.power_instant = {{ms(300), 100}, {ms(400), 100}};
  total.add(second);
  // 400 ms at 100 W from the first reading; then held to the scrape at 500 ms.
  EXPECT_NEAR(total.joules_at(ms(400)), 40, 1e-9);
  EXPECT_NEAR(total.joules_at(ms(500)), 50, 1e-9);
}

// The error bar: zero on the counter alone; the power-integrated extension at its relative bar, the held
// power whole and one posting period at the latest power; a total served ahead of the counter by its lead;
// the energy bridged across a counter break stays in the bar for good.
TEST(EnergyTotal, CarriesAnErrorBarFromWhatItKnows) {
  EnergyTotal counted;
  counted.add(counters({{0, 5'000'000}, {500, 5'150'000}, {1000, 5'300'000}}));
  EXPECT_DOUBLE_EQ(counted.joules_at(ms(1000)), 300.0);
  EXPECT_EQ(counted.uncertainty_j_at(ms(1000)), 0);

  EnergyTotal extended;
  GpuTrace trace = counters({{0, 1'000'000}, {500, 1'100'000}});
  trace.power_samples = {{ms(520), 200}, {ms(540), 200}, {ms(560), 200}};
  trace.power_instant = {{ms(400), 999}, {ms(600), 300}, {ms(700), 300}};
  extended.add(trace);
  EXPECT_NEAR(extended.joules_at(ms(800)), 184, 1e-9);
  // 5% of 12 J of samples and of 42 J of instantaneous power, the 30 J held, 300 W x 100 ms of posting.
  EXPECT_NEAR(extended.uncertainty_j_at(ms(800)), 0.6 + 2.1 + 30 + 30, 1e-9);
}

TEST(EnergyTotal, TheBarCoversATotalServedAheadOfTheCounter) {
  EnergyTotal total;
  GpuTrace first = counters({{0, 0}, {500, 100'000}});
  first.power_instant = {{ms(600), 400}, {ms(700), 400}, {ms(800), 400}, {ms(900), 400}};
  total.add(first);
  EXPECT_NEAR(total.joules_at(ms(1000)), 300, 1e-9);
  total.add(counters({{1000, 150'000}}));  // the truth: 150 J
  const double served = total.joules_at(ms(1000));
  const double bar = total.uncertainty_j_at(ms(1000));
  EXPECT_EQ(served, 300);
  EXPECT_LE(served - bar, 150.0);  // the truth lies within the bar
  EXPECT_NEAR(bar, 150 + 400 * 0.1, 1e-9);  // the lead, and one posting period at 400 W
}

TEST(EnergyTotal, EnergyBridgedAcrossACounterBreakStaysInTheBar) {
  EnergyTotal total;
  total.add(reset_at_700ms());
  EXPECT_NEAR(total.joules_at(ms(1500)), 450, 1e-9);
  // 120 J of instantaneous power to 900 ms (the read at 1000 ms comes first), then 300 W held 100 ms.
  EXPECT_NEAR(total.committed_uncertainty_j(), 0.05 * 120 + 30, 1e-9);
  total.add(counters({{2000, 390'000}}));
  EXPECT_NEAR(total.joules_at(ms(2000)), 600, 1e-9);
  EXPECT_NEAR(total.uncertainty_j_at(ms(2000)), 0.05 * 120 + 30 + 300 * 0.1, 1e-9);
}

}  // namespace
}  // namespace wattwise::exporter
