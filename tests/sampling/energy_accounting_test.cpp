#include "sampling/energy_accounting.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "simulate.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;
using testing::FakeGpuOptions;
using testing::simulate;
using testing::square_wave;

FakeGpuOptions counter_only() {
  FakeGpuOptions options;
  options.has_instant = false;
  options.has_average = false;
  options.has_samples = false;
  return options;
}

double relative_error(double measured, double truth) {
  return std::abs(measured - truth) / truth;
}

TEST(EnergyAccounting, CounterUpdatingEvery100msGivesWindowsBetweenItsKnots) {
  auto sim = simulate([](Nanos) { return 300.0; }, counter_only(), 3s);
  const EnergyAccounting accounting(sim.trace);
  const WindowEnergy window = accounting.energy(1234ms, 1734ms);
  ASSERT_TRUE(window.joules);
  EXPECT_EQ(window.method, EnergyMethod::kCounter);
  EXPECT_NEAR(*window.joules, 150.0, 0.5);
}

TEST(EnergyAccounting, WholeMeasurementIsTheCounterDifference) {
  auto sim = simulate(square_wave(600, 200ms, 100, 500ms), {}, 5s);
  const WindowEnergy total = EnergyAccounting(sim.trace).energy(0s, 5s);
  const double counter_j =
      static_cast<double>(sim.trace.energy.back().energy_mj - sim.trace.energy.front().energy_mj) / 1000;
  EXPECT_EQ(total.method, EnergyMethod::kCounter);
  ASSERT_TRUE(total.joules);
  EXPECT_NEAR(*total.joules, counter_j, 1e-6);
}

TEST(EnergyAccounting, WindowShorterThanOneCounterUpdateIsCutFromReconciledSamples) {
  FakeGpuOptions options;
  options.sample_shift = 40ms;
  auto sim = simulate(square_wave(600, 200ms, 100, 500ms), options, 6s);
  const EnergyAccounting accounting(sim.trace);
  // 60 ms inside an "on" phase, and 60 ms straddling its end: the counter alone cannot see either.
  for (Nanos start : {2870ms, 3010ms}) {
    const WindowEnergy window = accounting.energy(start, start + 60ms);
    ASSERT_TRUE(window.joules);
    EXPECT_EQ(window.method, EnergyMethod::kSamplesReconciled);
    const double truth = sim.gpu->true_energy_j(start, start + 60ms);
    EXPECT_LT(relative_error(*window.joules, truth), 0.03) << "window at " << to_seconds(start) << " s";
  }
}

TEST(EnergyAccounting, CounterResetStartsANewSegmentWithoutNegativeEnergy) {
  for (const bool with_samples : {true, false}) {
    FakeGpuOptions options = with_samples ? FakeGpuOptions{} : counter_only();
    options.counter_reset_at = 2050ms;
    auto sim = simulate([](Nanos) { return 250.0; }, options, 4s);
    const EnergyAccounting accounting(sim.trace);
    const WindowEnergy total = accounting.total();
    ASSERT_TRUE(total.joules);
    EXPECT_LT(relative_error(*total.joules, 1000.0), 0.03) << "samples: " << with_samples;
    for (Nanos t = 0ms; t < 4s; t += 50ms) {
      const WindowEnergy piece = accounting.energy(t, t + 50ms);
      ASSERT_TRUE(piece.joules);
      EXPECT_GE(*piece.joules, 0.0);
      EXPECT_NEAR(*piece.joules, 12.5, 1.0) << "at " << to_seconds(t) << " s, samples: " << with_samples;
    }
  }
}

TEST(EnergyAccounting, AbsentReadingsGiveNoEnergy) {
  GpuTrace empty;
  EXPECT_FALSE(window_energy(empty, 0s, 1s).joules);
  EXPECT_EQ(window_energy(empty, 0s, 1s).method, EnergyMethod::kNone);

  GpuTrace telemetry_only;
  telemetry_only.telemetry.push_back(TelemetryReading{0s, {}});
  telemetry_only.telemetry.push_back(TelemetryReading{1s, {}});
  EXPECT_FALSE(window_energy(telemetry_only, 0s, 1s).joules);

  GpuTrace instant;
  instant.power_instant = {{0s, 100}, {1s, 100}};
  EXPECT_FALSE(window_energy(instant, 5s, 6s).joules) << "a window far outside the readings";
}

TEST(EnergyAccounting, WindowEndingBeforeItStartsIsAUsageError) {
  GpuTrace instant;
  instant.power_instant = {{0s, 100}, {1s, 100}};
  try {
    window_energy(instant, 1s, 0s);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
  }
}

TEST(EnergyAccounting, WithoutCounterInstantPowerIsIntegratedByTrapezoid) {
  GpuTrace trace;
  for (int i = 0; i <= 10; ++i)
    trace.power_instant.push_back({100ms * i, 100.0 + 10.0 * i});  // 100 W + 100 W/s
  const WindowEnergy whole = window_energy(trace, 0s, 1s);
  EXPECT_EQ(whole.method, EnergyMethod::kInstantPower);
  ASSERT_TRUE(whole.joules);
  EXPECT_NEAR(*whole.joules, 150.0, 1e-9);  // exact for a linear ramp
  EXPECT_NEAR(*window_energy(trace, 250ms, 750ms).joules, 50.0 + 0.5 * 100 * (0.75 * 0.75 - 0.25 * 0.25),
              1e-9);

  GpuTrace averaged;
  averaged.power_average = {{0s, 200}, {1s, 200}};
  EXPECT_EQ(window_energy(averaged, 0s, 1s).method, EnergyMethod::kAveragePower);
  EXPECT_NEAR(*window_energy(averaged, 0s, 1s).joules, 200.0, 1e-9);

  GpuTrace samples;
  samples.power_samples = {{0ms, 300}, {20ms, 100}, {40ms, 100}};  // each the mean of the 20 ms before it
  EXPECT_EQ(window_energy(samples, 0ms, 40ms).method, EnergyMethod::kSamples);
  EXPECT_NEAR(*window_energy(samples, 0ms, 40ms).joules, 4.0, 1e-9);
}

// Phases of odd lengths laid end to end over [from, to]; returns the sum of their energies.
double tiled_sum_j(const EnergyAccounting& accounting, Nanos from, Nanos to) {
  double sum_j = 0;
  Nanos t = from;
  for (Nanos length : std::initializer_list<Nanos>{130ms, 70ms, 410ms, 1s, 37ms, 999ms, 250ms}) {
    for (; t + length < to; t += length) sum_j += *accounting.energy(t, t + length).joules;
  }
  return sum_j + *accounting.energy(t, to).joules;
}

TEST(EnergyAccounting, PhasesThatTileAWindowSumToTheWholeWindowCounterEnergy) {
  FakeGpuOptions options;
  options.sample_shift = 40ms;
  auto sim = simulate(square_wave(600, 200ms, 100, 500ms), options, 10s);
  const EnergyAccounting accounting(sim.trace);

  // Between two counter updates the phases add up to the counter's increment exactly (the pieces are
  // k = 5 postings long under the phase-locked schedule, shorter during its learning and checks).
  const CounterTimeline timeline = build_counter_timeline(sim.trace.energy);
  ASSERT_GT(timeline.pieces.size(), 18u);
  const std::size_t last_piece = timeline.pieces.size() - 3;
  const CounterPiece& a = timeline.pieces[3];
  const CounterPiece& b = timeline.pieces[last_piece];
  double counter_j = 0;
  for (std::size_t i = 4; i <= last_piece; ++i) counter_j += *timeline.pieces[i].energy_j;
  EXPECT_NEAR(tiled_sum_j(accounting, a.end, b.end), counter_j, 1e-6);

  // Over the whole measurement the total is the counter difference, which describes the span between
  // the postings of the first and last values: they differ by at most the energy of one update period at
  // each end (600 W x 2 x 100 ms here), never more.
  const WindowEnergy total = accounting.total();
  EXPECT_EQ(total.method, EnergyMethod::kCounter);
  const Nanos first = sim.trace.energy.front().t;
  const Nanos last = sim.trace.energy.back().t;
  const double sum_j = tiled_sum_j(accounting, first, last - 1ns);
  EXPECT_LT(std::abs(sum_j - *total.joules), 600 * 0.2);
  EXPECT_LT(relative_error(sum_j, sim.gpu->true_energy_j(first, last)), 0.01) << "the phases are right";
}

TEST(EnergyAccounting, SquareWaveWithShiftedSamplesGivesPerPhaseEnergyAndRecoversTheOffset) {
  FakeGpuOptions options;
  options.sample_shift = 40ms;  // unknown to the accounting
  auto sim = simulate(square_wave(600, 200ms, 100, 500ms), options, 14s);
  const EnergyAccounting accounting(sim.trace);

  const std::optional<Alignment> alignment = accounting.alignment();
  ASSERT_TRUE(alignment);
  EXPECT_NEAR(to_seconds(alignment->offset), 0.040, 0.004);
  EXPECT_GT(alignment->intervals, 25u);  // ~2 counter reads a second
  EXPECT_LT(alignment->residual_relative, 0.05);

  int phases = 0;
  for (Nanos start = 700ms; start + 700ms < 13s; start += 700ms) {
    for (auto [begin, end] : {std::pair{start, start + 200ms}, std::pair{start + 200ms, start + 700ms}}) {
      const WindowEnergy phase = accounting.energy(begin, end);
      ASSERT_TRUE(phase.joules);
      EXPECT_EQ(phase.method, EnergyMethod::kSamplesReconciled);
      EXPECT_LT(relative_error(*phase.joules, sim.gpu->true_energy_j(begin, end)), 0.03)
          << "phase " << to_seconds(begin) << "-" << to_seconds(end) << " s";
      ++phases;
    }
  }
  EXPECT_GT(phases, 30);
}

TEST(EnergyAccounting, PhaseOfKIdenticalIterationsCostsKTimesTheLongRunEnergyPerIteration) {
  const Nanos iteration = 50ms;  // 30 ms compute at 500 W, 20 ms data loading at 150 W
  FakeGpuOptions options;
  options.sample_shift = 40ms;
  auto sim = simulate(square_wave(500, 30ms, 150, 20ms), options, 20s);
  const EnergyAccounting accounting(sim.trace);
  const WindowEnergy total = accounting.total();
  const Nanos span = sim.trace.energy.back().t - sim.trace.energy.front().t;
  const double per_iteration_j = *total.joules / (to_seconds(span) / to_seconds(iteration));

  for (int k : {1, 4, 7, 20}) {
    const Nanos begin = 5s + iteration * 13;
    const WindowEnergy phase = accounting.energy(begin, begin + iteration * k);
    ASSERT_TRUE(phase.joules);
    EXPECT_LT(relative_error(*phase.joules, k * per_iteration_j), 0.03) << k << " iterations";
  }
}

TEST(EnergyAccounting, InstantPowerIsReconciledWhenThereAreNoSamples) {
  FakeGpuOptions options;
  options.has_samples = false;
  auto sim = simulate(square_wave(600, 2s, 100, 2s), options, 10s);
  const EnergyAccounting accounting(sim.trace);
  EXPECT_EQ(accounting.reconciled_method(), EnergyMethod::kInstantReconciled);
  const WindowEnergy on = accounting.energy(4s, 6s);
  EXPECT_EQ(on.method, EnergyMethod::kInstantReconciled);
  EXPECT_LT(relative_error(*on.joules, 1200.0), 0.03);
}

}  // namespace
}  // namespace wattwise::sampling
