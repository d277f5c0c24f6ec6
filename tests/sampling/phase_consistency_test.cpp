// Per-phase figures under the phase-locked counter schedule (a read every k-th posting, a 4 ms CPU cost per
// read on the virtual clock, the counter posting every 100 ms at its own phase): the 20 ms samples carry
// the shape between the sparse reads. The checks of issue 11: k identical phases cost k times the long-run
// energy per phase, and the on-phase power of 0.2 s and 0.5 s phases agree within 3%.
#include <gtest/gtest.h>

#include <cmath>

#include "sampling/energy_accounting.hpp"
#include "simulate.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;
using testing::FakeGpuOptions;
using testing::simulate;
using testing::square_wave;

constexpr double kOnW = 450;
constexpr double kOffW = 120;

FakeGpuOptions h100_like() {
  FakeGpuOptions options;
  options.counter_read_cost = 4ms;  // the driver spins ~4 ms per read
  options.sample_shift = 7ms;       // the device's stamps run a little late, as alignment must find
  return options;
}

struct PhaseRun {
  testing::Simulation sim;
  Nanos phase;
};

PhaseRun run_phases(Nanos phase, Nanos duration) {
  return {simulate(square_wave(kOnW, phase, kOffW, phase), h100_like(), duration), phase};
}

// Mean power of the on-phases that lie well inside the run (not the first and last seconds).
double mean_on_power_w(const PhaseRun& run, Nanos duration) {
  const EnergyAccounting accounting(run.sim.trace);
  double joules = 0, seconds = 0;
  for (Nanos t = 2 * run.phase * ((1s + 2 * run.phase - 1ns) / (2 * run.phase));
       t + run.phase < duration - 1s; t += 2 * run.phase) {
    const WindowEnergy e = accounting.energy(t, t + run.phase);
    EXPECT_EQ(e.method, EnergyMethod::kSamplesReconciled);
    joules += e.joules.value_or(0);
    seconds += std::chrono::duration<double>(run.phase).count();
  }
  return joules / seconds;
}

TEST(PhaseConsistency, ThePhaseLockedScheduleReadsTheCounterOnlyAFewTimesASecond) {
  const PhaseRun run = run_phases(200ms, 20s);
  const double reads_per_s = static_cast<double>(run.sim.trace.energy.size()) / 20.0;
  EXPECT_LT(reads_per_s, 3.5) << "the old schedule read 100 times a second";
}

TEST(PhaseConsistency, OnPhasePowerOfShortAndLongPhasesAgreesWithinThreePercent) {
  const double short_w = mean_on_power_w(run_phases(200ms, 20s), 20s);
  const double long_w = mean_on_power_w(run_phases(500ms, 20s), 20s);
  EXPECT_NEAR(short_w, long_w, 0.03 * long_w);
  EXPECT_NEAR(short_w, kOnW, 0.03 * kOnW) << "and both are the power drawn";
  EXPECT_NEAR(long_w, kOnW, 0.03 * kOnW);
}

TEST(PhaseConsistency, KIdenticalPhasesCostKTimesTheLongRunEnergyPerPhase) {
  for (Nanos phase : {200ms, 500ms}) {
    const Nanos duration = 20s;
    const PhaseRun run = run_phases(phase, duration);
    const EnergyAccounting accounting(run.sim.trace);
    const Nanos period = 2 * phase;
    // The long run: 30 whole periods from 2 s on; each block of k on-phases against k times its share.
    const Nanos from = 2 * period * ((2s + 2 * period - 1ns) / (2 * period));
    const int periods = static_cast<int>((duration - 1s - from) / period);
    double on_j = 0;
    for (int i = 0; i < periods; ++i)
      on_j += *accounting.energy(from + i * period, from + i * period + phase).joules;
    const double per_on_phase_j = on_j / periods;
    for (int k : {1, 2, 5}) {
      for (int start = 0; start + k <= periods; start += k) {
        double block_j = 0;
        for (int i = start; i < start + k; ++i)
          block_j += *accounting.energy(from + i * period, from + i * period + phase).joules;
        EXPECT_NEAR(block_j, k * per_on_phase_j, 0.02 * k * per_on_phase_j)
            << "phase " << phase.count() / 1'000'000 << " ms, k " << k << ", block at " << start;
      }
    }
    EXPECT_NEAR(per_on_phase_j, kOnW * std::chrono::duration<double>(phase).count(),
                0.02 * kOnW * std::chrono::duration<double>(phase).count());
  }
}

}  // namespace
}  // namespace wattwise::sampling
