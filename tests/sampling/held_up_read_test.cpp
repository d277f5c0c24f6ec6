// A counter read that may have returned the value from before the posting its knot snaps to
// (CounterPiece::end_if_read_was_stale): where the fine trace can place such knots and where it must not;
// and samples the device's buffer dropped (GpuTrace::sample_gaps), which a starved node leaves beside them.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "sampling/energy_accounting.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

// A GPU drawing `power_w(t)`, its counter posted every 100 ms on the dot; its samples every 20 ms, each the
// mean over the 20 ms before it, on the counter's own clock (offset 0).
struct HeldUpReads {
  std::function<double(Nanos)> power_w;
  GpuTrace trace;

  explicit HeldUpReads(std::function<double(Nanos)> power) : power_w(std::move(power)) {}
  double energy_j(Nanos t0, Nanos t1) const {  // exact for loads that change on whole milliseconds
    double joules = 0;
    for (Nanos t = t0; t < t1; t += 1ms) joules += power_w(t) * 1e-3;
    return joules;
  }
  double posted_j(Nanos t) const { return energy_j(0ms, t / 100ms * 100ms); }
  // A read begun at `begin`, `cost` long, returning the value posted at or before `value_at`.
  void read(Nanos begin, Nanos cost, Nanos value_at) {
    trace.energy.push_back(
        {begin + cost, cost, static_cast<std::uint64_t>(std::llround(posted_j(value_at) * 1000))});
  }
  void burst(Nanos from, Nanos to) {  // a learning burst: 1 ms reads every 13 ms
    for (Nanos t = from; t <= to; t += 13ms) read(t, 1ms, t);
  }
  // Every 20 ms up to `until`; with a gap, none strictly between `gap.after` and `gap.before` (both on the
  // 20 ms grid), as the sampler keeps a late drain's: the sample at `gap.before` is its own 20 ms's mean.
  void samples(Nanos until, std::optional<SampleGap> gap = std::nullopt) {
    for (Nanos t = 20ms; t <= until; t += 20ms)
      if (!gap || t <= gap->after || t >= gap->before)
        trace.power_samples.push_back({t, energy_j(t - 20ms, t) / 0.02});
    if (gap) trace.sample_gaps.push_back(*gap);
  }
};

double relative_error(double measured, double truth) {
  return std::abs(measured - truth) / truth;
}

// A constant 150 W GPU whose counter was read every 10th posting, one read begun 3 ms before the 3.0 s posting
// and held up 15 ms (a preempted call). `stale`: it returned the value from before that posting, as in
// issue 20's load test (repetition 47: a constant GPU's iterations 8.7% low, its 1 s piece 10% low, because
// the knot was placed at the posting inside the call, 100 ms late). Else it returned the new value.
HeldUpReads constant_gpu_with_a_held_up_read(bool stale, bool samples) {
  HeldUpReads gpu([](Nanos) { return 150.0; });
  gpu.burst(105ms, 405ms);
  for (Nanos p = 1s; p <= 2s; p += 1s) gpu.read(p + 8ms, 1ms, p + 8ms);  // locked: just after every 10th
  gpu.read(2997ms, 15ms, stale ? 2998ms : 3010ms);
  for (Nanos p = 4s; p <= 9s; p += 1s) gpu.read(p + 8ms, 1ms, p + 8ms);
  if (samples) gpu.samples(9100ms);
  return gpu;
}

TEST(HeldUpRead, AStaleValueEndsItsIncrementWhereTheSamplesSay) {
  for (bool stale : {true, false}) {
    const EnergyAccounting accounting(constant_gpu_with_a_held_up_read(stale, true).trace);
    // Before the fix the stale read's 2-3 s piece held 2.9 s of energy over a second: 10% low, 10% high after.
    for (Nanos t0 : {1s, 2s, 3s, 4s}) {
      const WindowEnergy second = accounting.energy(t0, t0 + 1s);
      ASSERT_TRUE(second.joules);
      EXPECT_LT(relative_error(*second.joules, 150), 0.005) << "stale " << stale << ", from " << t0.count();
    }
    for (Nanos t0 = 2100ms; t0 < 2900ms; t0 += 200ms) {
      const WindowEnergy iteration = accounting.energy(t0, t0 + 150ms);
      EXPECT_LT(relative_error(*iteration.joules, 22.5), 0.005) << "stale " << stale << ", from " << t0.count();
    }
  }
}

TEST(HeldUpRead, WithoutAFineTraceTheKnotIsUncertainByAPeriodAndTheBarCoversIt) {
  const EnergyAccounting accounting(constant_gpu_with_a_held_up_read(true, false).trace);
  EXPECT_EQ(accounting.reconciled_method(), EnergyMethod::kCounter);
  for (Nanos t0 : {2s, 3s}) {
    const WindowEnergy second = accounting.energy(t0, t0 + 1s);
    ASSERT_TRUE(second.joules);
    EXPECT_GT(std::abs(*second.joules - 150), 5) << "the counter alone cannot place the knot";
    EXPECT_LE(std::abs(*second.joules - 150), second.uncertainty_j) << "from " << t0.count();
  }
}

// Seconds alternating between 300 W and 100 W, 200 W through the first (so the offset search has edges).
double alternating_seconds(Nanos t) {
  if (t < 1s) return 200;
  return (t / 1s) % 2 == 0 ? 300 : 100;
}

// The schedule reads every posting, each call begun 1.2 ms before it and 2 ms long: every read returned
// the value from before (train_sync on the H100, --schedule 1, 12.7-14.5 s: 18 knots in a row). Each knot
// is clamped to its read, 0.2 ms before the posting after the one it stands for, so each one's earlier
// placement lies 0.2 ms after the knot before it: no knot can move alone; the whole run must.
TEST(HeldUpRead, ARunOfStaleReadsMovesTogether) {
  HeldUpReads gpu(alternating_seconds);
  gpu.burst(105ms, 405ms);
  for (Nanos p = 1s; p <= 7s; p += 100ms) gpu.read(p - 1200us, 2ms, p - 1200us);  // stale: before p
  for (Nanos p = 7100ms; p <= 9s; p += 100ms) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.samples(9100ms);
  const EnergyAccounting accounting(gpu.trace);
  ASSERT_EQ(accounting.reconciled_method(), EnergyMethod::kSamplesReconciled);
  for (Nanos t0 = 1s; t0 < 8s; t0 += 500ms) {
    const WindowEnergy window = accounting.energy(t0, t0 + 1s);
    const double truth = gpu.energy_j(t0, t0 + 1s);
    ASSERT_TRUE(window.joules);
    EXPECT_LT(relative_error(*window.joules, truth), 0.005) << "from " << t0.count();
    EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j) << "from " << t0.count();
  }
}

// On/off halves of a second (750 W, 150 W, switching 40 ms before every 5th posting) read every 5th
// posting, a few ms after it, but the reads at 2.5, 4.5 and 6.5 s began 3 ms before their postings and were
// held up 15 ms with the value from before. Fitted to those knots as placed (main at 6f500ad), the fine
// trace's offset came out 32 ms and the phases up to 7.7% off (the H100's onoff_0.5 at --schedule 5: -16.0
// against -1.5 ms from every read, its off phases 13% high). Fitted without them, the offset is the
// samples' own but for the learning burst's grid (1.5 ms early): phases within 1.5% (0.9 J of an off
// phase's 75 J is 600 W over those 1.5 ms).
TEST(HeldUpRead, TheOffsetIsFittedWithoutTheKnotsItPlaces) {
  HeldUpReads gpu([](Nanos t) { return ((t + 40ms) / 500ms) % 2 == 0 ? 750.0 : 150.0; });
  gpu.burst(105ms, 405ms);
  for (Nanos p = 500ms; p <= 8s; p += 500ms) {
    if (p == 2500ms || p == 4500ms || p == 6500ms) {
      gpu.read(p - 3ms, 15ms, p - 3ms);
    } else {
      gpu.read(p + 3ms, 1ms, p + 3ms);
    }
  }
  gpu.samples(8100ms);
  const EnergyAccounting accounting(gpu.trace);
  ASSERT_TRUE(accounting.alignment());
  EXPECT_LT(std::chrono::abs(accounting.alignment()->offset), 3ms);
  for (Nanos t0 = 960ms; t0 < 7500ms; t0 += 500ms) {
    const WindowEnergy phase = accounting.energy(t0, t0 + 500ms);
    const double truth = gpu.energy_j(t0, t0 + 500ms);
    ASSERT_TRUE(phase.joules);
    EXPECT_LT(relative_error(*phase.joules, truth), 0.015) << "from " << t0.count();
    EXPECT_LE(std::abs(*phase.joules - truth), phase.uncertainty_j) << "from " << t0.count();
  }
}

// A held-up read at 3.0 s returned the value from before that posting; a 1 kW burst ran for the 15 ms before
// the 2.9 s posting, 100 W otherwise. The fine trace's offset is given 15 ms late (as a long job's folds may
// know it, within the 20 ms a sample allows): the burst then seems to fall after 2.9 s, and only the late
// placement explains it. A 5 ms earlier offset explains the early one: the choice does not hold over the
// offsets the samples allow, so the knot's uncertainty is the period and the bars cover what the choice
// cost. Without (main at 6f500ad): the 2.8-2.9 s window 12.2 J against 23.5 J, its bar 8.4 J; keeping the
// late placement with the grid's uncertainty, the 2.9-3.0 s window 19.9 J against 10.0 J, its bar 8.3 J.
TEST(HeldUpRead, AChoiceThatTheOffsetsUncertaintyCouldTurnWidensTheKnot) {
  HeldUpReads gpu([](Nanos t) { return t >= 2885ms && t < 2900ms ? 1000.0 : 100.0; });
  gpu.burst(105ms, 405ms);
  for (Nanos p = 1s; p <= 2s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.read(2997ms, 15ms, 2998ms);  // begun before the 3.0 s posting, its value from before it
  for (Nanos p = 4s; p <= 6s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.samples(6100ms);
  const EnergyAccounting accounting(gpu.trace, -15ms);
  for (Nanos t0 = 2700ms; t0 < 3200ms; t0 += 50ms) {
    const WindowEnergy window = accounting.energy(t0, t0 + 100ms);
    const double truth = gpu.energy_j(t0, t0 + 100ms);
    ASSERT_TRUE(window.joules);
    EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j) << "from " << t0.count();
  }
}


// Every window from `from` (in 10 ms steps to 3.9 s) to 7.5 s holds the fake's true energy within its bar.
void expect_windows_to_7500ms_within_their_bars(const EnergyAccounting& accounting, const HeldUpReads& gpu,
                                                Nanos from) {
  for (Nanos t0 = from; t0 < 3900ms; t0 += 10ms) {
    const WindowEnergy window = accounting.energy(t0, 7500ms);
    const double truth = gpu.energy_j(t0, 7500ms);
    ASSERT_TRUE(window.joules);
    EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j)
        << "from " << t0 / 1ms << " ms: " << *window.joules << " J against " << truth;
  }
}

// pinned-n10-s4 (docs/evidence/pinned-h100.md): wattwise's threads at nice 10 beside busy loops on their core.
// For seconds every counter read took 116-311 ms, back to back, and took its value a few ms into its call:
// each knot snapped to the posting inside the call stands a period late. A knot's earlier placement was
// allowed only after the previous read's midpoint, though that read, held up too, had taken its value at its
// start: some knots could not move, the offset was fitted to them (here -77 ms against the samples' 0) and
// the stale knots around them were placed against them, a period late. There the window from 1.21 s read
// 8.0 J high against the independent counter with a bar of 5.0 J. The calls' ends and lengths here are the
// H100's, 1 s later (less its grid's 7.9 ms phase), at its 78 W; then an on/off load read every 5th posting.
// On main at 1fddbf3 34 of these windows were outside their bars (39.7 J off against 28.2 J at worst), and
// the offset 77 ms.
TEST(HeldUpRead, ABackToBackRunOfLongHeldUpReadsKeepsEdgesWithinTheirBars) {
  HeldUpReads gpu([](Nanos t) { return t < 3s ? 78.0 : ((t - 3s) / 350ms) % 2 ? 120.0 : 400.0; });
  gpu.read(1ms, 2ms, 1ms);
  gpu.burst(105ms, 405ms);
  gpu.read(1003ms, 1ms, 1003ms);
  const std::pair<int, int> held_up[] = {  // (the call's end less 1 s, its length), ms
      {265, 132},  {397, 132},  {549, 152},  {721, 172},  {1033, 311}, {1165, 132},
      {1313, 144}, {1469, 156}, {1585, 116}, {1727, 142}, {1845, 117}, {1961, 116},
      {2077, 116}, {2225, 148}, {2389, 163}, {2565, 176}, {2697, 132}, {2829, 131}};
  for (const auto& [end, length] : held_up) {
    const Nanos begin = std::chrono::milliseconds(1000 + end - length);
    gpu.read(begin, std::chrono::milliseconds(length), begin + 3ms);
  }
  for (Nanos p = 4s; p <= 8s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.samples(8100ms);
  const EnergyAccounting accounting(gpu.trace);
  ASSERT_EQ(accounting.reconciled_method(), EnergyMethod::kSamplesReconciled);
  expect_windows_to_7500ms_within_their_bars(accounting, gpu, 1100ms);
  ASSERT_TRUE(accounting.alignment());
  EXPECT_LT(std::chrono::abs(accounting.alignment()->offset), 5ms);
}

// The same calls from the trace's start, with no clean read before them: the run's first piece begins before
// the first sample, so the samples cannot judge the run and its knots stay where they were snapped, a period
// late, with a period of uncertainty. That period was priced at the piece's mean power, and a piece stretched
// by a period reads half the power: on main at b9fc715 the windows from 0.55-0.59 s were 6.4-8.0 J off with
// bars of 5.3-6.1 J. Priced at what the samples drew beside the knot, the bars cover them.
TEST(HeldUpRead, AKnotUncertainByAPeriodIsPricedAtThePowerBesideItNotItsStretchedPiecesMean) {
  HeldUpReads gpu([](Nanos t) { return t < 3s ? 78.0 : ((t - 3s) / 350ms) % 2 ? 120.0 : 400.0; });
  gpu.read(1ms, 2ms, 1ms);
  gpu.read(2ms, 15ms, 16ms);
  const std::pair<int, int> held_up[] = {  // (the call's end, its length), ms: the test above's
      {265, 132},  {397, 132},  {549, 152},  {721, 172},  {1033, 311}, {1165, 132},
      {1313, 144}, {1469, 156}, {1585, 116}, {1727, 142}, {1845, 117}, {1961, 116},
      {2077, 116}, {2225, 148}, {2389, 163}, {2565, 176}, {2697, 132}, {2829, 131}};
  for (const auto& [end, length] : held_up) {
    const Nanos begin = std::chrono::milliseconds(end - length);
    gpu.read(begin, std::chrono::milliseconds(length), begin + 3ms);
  }
  for (Nanos p = 3s; p <= 4s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.burst(4105ms, 4405ms);
  for (Nanos p = 5s; p <= 8s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.samples(8100ms);
  const EnergyAccounting accounting(gpu.trace);
  ASSERT_EQ(accounting.reconciled_method(), EnergyMethod::kSamplesReconciled);
  expect_windows_to_7500ms_within_their_bars(accounting, gpu, 300ms);
}

// The samples dropped over 2.86-3.06 s (a late drain), the one after the gap a 1 kW burst's 20 ms, 100 W
// otherwise, which the fine trace holds over the whole 200 ms. How the gap's energy splits at an edge inside
// it is unknown, and the bars carry it: before, the 2.9-3.0 s window read 59.8 J against 10.0 J with a bar
// far smaller, with the held-up read at 3.0 s or a plain one. The held-up read's choice cannot turn on the
// gap (the interval its placements differ by counts on one side of the knot or the other, so a wrong value
// there misfits both alike): the counter's seconds keep their energy.
TEST(SampleGap, AWindowEdgeInsideDroppedSamplesCarriesTheGapsEnergyOnItsBar) {
  for (const bool held_up : {true, false}) {
    for (const bool stale : {true, false}) {
      HeldUpReads gpu([](Nanos t) { return t >= 3040ms && t < 3060ms ? 1000.0 : 100.0; });
      gpu.burst(105ms, 405ms);
      for (Nanos p = 1s; p <= 2s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
      if (held_up) {
        gpu.read(2997ms, 15ms, stale ? 2998ms : 3010ms);
      } else {
        gpu.read(3003ms, 1ms, 3003ms);
      }
      for (Nanos p = 4s; p <= 6s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
      gpu.samples(6100ms, SampleGap{2860ms, 3060ms});
      const EnergyAccounting accounting(gpu.trace);
      ASSERT_EQ(accounting.reconciled_method(), EnergyMethod::kSamplesReconciled);
      const std::string label = fmt::format("held up {}, stale {}", held_up, stale);
      for (Nanos t0 = 2500ms; t0 < 3500ms; t0 += 50ms) {
        const WindowEnergy window = accounting.energy(t0, t0 + 100ms);
        const double truth = gpu.energy_j(t0, t0 + 100ms);
        ASSERT_TRUE(window.joules) << label;
        EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j)
            << label << ", from " << t0 / 1ms << " ms: " << *window.joules << " J against " << truth;
      }
      for (Nanos t0 : {2s, 3s}) {  // the counter's own seconds, where the knot was placed as its value says
        const WindowEnergy second = accounting.energy(t0 + 5ms, t0 + 1s);
        const double truth = gpu.energy_j(t0 + 5ms, t0 + 1s);
        EXPECT_LE(std::abs(*second.joules - truth), second.uncertainty_j) << label << ", from " << t0 / 1ms;
      }
      // Away from the gap nothing changes: the same trace without the gap's record gives the same bar there.
      GpuTrace unrecorded = gpu.trace;
      unrecorded.sample_gaps.clear();
      EXPECT_EQ(accounting.energy(4200ms, 4300ms).uncertainty_j,
                EnergyAccounting(unrecorded).energy(4200ms, 4300ms).uncertainty_j)
          << label;
    }
  }
}

// Two gaps, recorded out of order (a clock stepped between drains may leave them so): an edge inside either
// is found, and the bars are those of the same gaps in order.
TEST(SampleGap, GapsRecordedOutOfOrderWidenTheBarsAllTheSame) {
  HeldUpReads gpu([](Nanos t) { return t >= 1640ms && t < 1660ms ? 1000.0 : 100.0; });
  gpu.burst(105ms, 405ms);
  for (Nanos p = 1s; p <= 6s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
  const SampleGap early{1460ms, 1660ms}, late{2860ms, 3060ms};
  gpu.samples(6100ms, early);
  std::erase_if(gpu.trace.power_samples,
                [&](const PowerReading& r) { return r.t > late.after && r.t < late.before; });
  gpu.trace.sample_gaps = {late, early};
  GpuTrace in_order = gpu.trace;
  in_order.sample_gaps = {early, late};
  GpuTrace unrecorded = gpu.trace;
  unrecorded.sample_gaps.clear();
  const EnergyAccounting accounting(gpu.trace), ordered(in_order), without(unrecorded);
  ASSERT_EQ(accounting.reconciled_method(), EnergyMethod::kSamplesReconciled);
  // Across a counter knot (inside one piece the counter's bound may be the tighter).
  for (const Nanos t0 : {1500ms, 2900ms}) {
    const WindowEnergy window = accounting.energy(t0, t0 + 600ms);
    EXPECT_EQ(window.uncertainty_j, ordered.energy(t0, t0 + 600ms).uncertainty_j) << t0 / 1ms;
    EXPECT_GT(window.uncertainty_j, without.energy(t0, t0 + 600ms).uncertainty_j) << t0 / 1ms;
    const double truth = gpu.energy_j(t0, t0 + 600ms);
    EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j) << t0 / 1ms;
  }
}

// A window with both edges inside one gap: its share of the gap's energy is unknown, but no more than that
// energy; the bar carries it once, not once per edge (samples alone: nothing else on the bar changes). Samples
// alone, a window that holds the gap whole carries it too: nothing but the held sample tells its energy
// (before, 2.5-3.5 s read 280 J against 118 J with a 14 J bar).
TEST(SampleGap, AWindowInsideOneGapCarriesItsEnergyOnce) {
  HeldUpReads gpu([](Nanos t) { return t >= 3040ms && t < 3060ms ? 1000.0 : 100.0; });
  gpu.samples(6100ms, SampleGap{2860ms, 3060ms});
  GpuTrace unrecorded = gpu.trace;
  unrecorded.sample_gaps.clear();
  const EnergyAccounting accounting(gpu.trace), without(unrecorded);
  ASSERT_EQ(accounting.energy(2900ms, 3000ms).method, EnergyMethod::kSamples);
  const double gap_j = *without.energy(2860ms, 3060ms).joules;
  EXPECT_NEAR(accounting.energy(2900ms, 3000ms).uncertainty_j - without.energy(2900ms, 3000ms).uncertainty_j,
              gap_j, 1e-9 * gap_j);
  // One edge in it and one outside, or spanning it whole: the gap once too.
  for (const Nanos t0 : {2900ms, 2500ms}) {
    EXPECT_NEAR(accounting.energy(t0, 3500ms).uncertainty_j - without.energy(t0, 3500ms).uncertainty_j, gap_j,
                1e-9 * gap_j)
        << t0 / 1ms;
  }
  for (const auto& [t0, t1] : {std::pair{2900ms, 3000ms}, std::pair{2500ms, 3500ms}}) {
    const WindowEnergy window = accounting.energy(t0, t1);
    EXPECT_LE(std::abs(*window.joules - gpu.energy_j(t0, t1)), window.uncertainty_j) << t0 / 1ms;
  }
}

// The offset that maps a window's time to the samples' is known to kOffsetUncertainty (20 ms) at best: an edge
// that close outside a gap may truly lie inside it, and carries the gap's energy as one inside does; an edge
// farther off does not. A window whose two edges both come that close to one gap carries it once. Samples
// alone (offset 0), and reconciled with the counter at a known offset (no search: its own uncertainty is 0).
TEST(SampleGap, AnEdgeWithinTheOffsetsUncertaintyOfAGapCarriesItsEnergy) {
  HeldUpReads gpu([](Nanos t) { return t >= 3040ms && t < 3060ms ? 1000.0 : 100.0; });
  const SampleGap gap{2860ms, 3060ms};
  gpu.samples(6100ms, gap);
  for (const bool reconciled : {false, true}) {
    if (reconciled) {
      gpu.burst(105ms, 405ms);
      for (Nanos p = 1s; p <= 6s; p += 1s) gpu.read(p + 3ms, 1ms, p + 3ms);
    }
    GpuTrace unrecorded = gpu.trace;
    unrecorded.sample_gaps.clear();
    const EnergyAccounting accounting(gpu.trace, Nanos{0}), without(unrecorded, Nanos{0});
    ASSERT_EQ(accounting.energy(1500ms, 2850ms).method,
              reconciled ? EnergyMethod::kSamplesReconciled : EnergyMethod::kSamples);
    const double gap_j = *without.energy(gap.after, gap.before).joules;
    // Across counter knots (inside one piece the counter's own bound may be the tighter): 10 ms short of the
    // gap, 10 ms past it, and both; then 30 ms off, beyond the reach.
    const std::pair<Nanos, Nanos> near[] = {{1500ms, 2850ms}, {3070ms, 4500ms}, {2850ms, 3070ms}};
    for (const auto& [t0, t1] : near) {
      const WindowEnergy window = accounting.energy(t0, t1);
      const std::string label = fmt::format("reconciled {}, {}-{} ms", reconciled, t0 / 1ms, t1 / 1ms);
      EXPECT_GE(window.uncertainty_j, gap_j) << label;
      EXPECT_NEAR(window.uncertainty_j - without.energy(t0, t1).uncertainty_j, gap_j, 1e-9 * gap_j) << label;
      EXPECT_LE(std::abs(*window.joules - gpu.energy_j(t0, t1)), window.uncertainty_j) << label;
    }
    const std::pair<Nanos, Nanos> far[] = {{1500ms, 2830ms}, {3090ms, 4500ms}};
    for (const auto& [t0, t1] : far)
      EXPECT_EQ(accounting.energy(t0, t1).uncertainty_j, without.energy(t0, t1).uncertainty_j)
          << "reconciled " << reconciled << ", " << t0 / 1ms << "-" << t1 / 1ms << " ms";
    // Holding it whole, edges far off: reconciled, the counter tells its energy; samples alone, it is on the bar.
    const WindowEnergy whole = accounting.energy(1500ms, 4500ms);
    EXPECT_NEAR(whole.uncertainty_j - without.energy(1500ms, 4500ms).uncertainty_j, reconciled ? 0.0 : gap_j,
                1e-9 * gap_j)
        << "reconciled " << reconciled;
    EXPECT_LE(std::abs(*whole.joules - gpu.energy_j(1500ms, 4500ms)), whole.uncertainty_j) << reconciled;
  }
}

// The sampler records a gap as (the last sample seen, the first new one), each mapped from the device's wall
// clock with its own drain's offset: a wall clock stepped forward between the two drains by more than the gap
// leaves it inverted. Its energy was then taken with its sign turned: samples alone, the 200 J of a gap
// whose held sample was a burst's came off the bar instead of onto it (2.5-3.5 s: -186 J). The stretch is
// read as the same gap the right way round.
TEST(SampleGap, AGapRecordedInvertedWidensTheBarsAsTheRightWayRound) {
  HeldUpReads gpu([](Nanos t) { return t >= 3040ms && t < 3060ms ? 1000.0 : 100.0; });
  gpu.samples(6100ms, SampleGap{2860ms, 3060ms});
  GpuTrace inverted = gpu.trace;
  inverted.sample_gaps = {SampleGap{3060ms, 2860ms}};
  const EnergyAccounting accounting(inverted), right(gpu.trace);
  for (const auto& [t0, t1] : {std::pair{2900ms, 3000ms}, std::pair{2500ms, 3500ms}, std::pair{3100ms, 3500ms}}) {
    const WindowEnergy window = accounting.energy(t0, t1);
    EXPECT_EQ(window.uncertainty_j, right.energy(t0, t1).uncertainty_j) << t0 / 1ms;
    EXPECT_LE(std::abs(*window.joules - gpu.energy_j(t0, t1)), window.uncertainty_j) << t0 / 1ms;
  }
}

}  // namespace
}  // namespace wattwise::sampling

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

// A call held up for 3 s (2.1-5.1 s, returning the value from its start), the GPU swinging 120/400 W every
// 350 ms. Its knot stays as uncertain as the call (the first test below), but an edge beside it need not
// be: the counter at the well-placed knot on either side (2.0 s, 5.2 s) and the samples between that knot
// and the edge fix the edge to the samples' few %, whatever the held-up knot. On an H100 at 0.18% of a core
// (docs/evidence/pinned-h100.md, call 3) the window's bar was +-1056 J that way; here, on main at ed97d68,
// the windows from inside the call to 5.15 s or 7.5 s carried up to 1609 J of bar (1432 J with the gap),
// inside. `gap`: the samples dropped over 3.0-4.0 s (a late drain, as beside such calls on the H100): edges
// there are known only to what the GPU may have drawn meanwhile, and must stay inside.
HeldUpReads a_call_held_up_across_thirty_postings(bool gap) {
  HeldUpReads gpu([](Nanos t) { return ((t - 0s) / 350ms) % 2 ? 120.0 : 400.0; });
  gpu.burst(105ms, 405ms);
  for (Nanos p = 1s; p <= 2s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.read(2103ms, 3s, 2103ms);
  for (Nanos p = 5200ms; p <= 8s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
  gpu.samples(8100ms, gap ? std::optional(SampleGap{3000ms, 4000ms}) : std::nullopt);
  return gpu;
}

// A call held up for 3 s, 30 postings, returning the value from its start (an H100's reads took 1.8-7.9 s
// at 0.18% of a core: docs/evidence/pinned-h100.md, call 3, a window 491.6 J off with a bar of 124.2 J): the
// two placements a held-up knot is offered (the posting before the read's return or the one before that) are
// both seconds late, and the knot must carry the call's length as its uncertainty.
TEST(HeldUpRead, AKnotOfACallHeldUpAcrossManyPostingsIsAsUncertainAsTheCall) {
  const HeldUpReads gpu = a_call_held_up_across_thirty_postings(false);
  const EnergyAccounting accounting(gpu.trace);
  for (Nanos t0 = 2000ms; t0 < 5200ms; t0 += 50ms) {
    for (Nanos t1 : {5150ms, 7500ms}) {
      if (t1 <= t0) continue;
      const WindowEnergy window = accounting.energy(t0, t1);
      const double truth = gpu.energy_j(t0, t1);
      ASSERT_TRUE(window.joules);
      EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j)
          << t0 / 1ms << "-" << t1 / 1ms << " ms: " << *window.joules << " J against " << truth;
    }
  }
}

}  // namespace
}  // namespace wattwise::sampling

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

TEST(HeldUpRead, AnEdgeBesideAKnotHeldUpAcrossManyPostingsIsPlacedFromTheSamplesAndTheKnotsBeyondIt) {
  for (bool gap : {false, true}) {
    const HeldUpReads gpu = a_call_held_up_across_thirty_postings(gap);
    const EnergyAccounting accounting(gpu.trace);
    const double call_j = gpu.energy_j(2103ms, 5103ms);  // ~800 J: what a bar as wide as the call spans
    double widest_j = 0;
    int windows = 0;
    for (Nanos t0 = 2000ms; t0 < 5200ms; t0 += 50ms) {
      for (Nanos t1 : {5150ms, 7500ms}) {
        if (t1 <= t0) continue;
        const WindowEnergy window = accounting.energy(t0, t1);
        const double truth = gpu.energy_j(t0, t1);
        ASSERT_TRUE(window.joules);
        EXPECT_LE(std::abs(*window.joules - truth), window.uncertainty_j)
            << "gap " << gap << ", " << t0 / 1ms << "-" << t1 / 1ms << " ms: " << *window.joules
            << " J against " << truth;
        // Away from the dropped samples (and the offset's reach about them), narrow.
        if (!gap || t0 < 2900ms || t0 > 4100ms) {
          widest_j = std::max(widest_j, window.uncertainty_j);
          ++windows;
        }
      }
    }
    EXPECT_GT(windows, 40);
    EXPECT_LT(widest_j, 0.1 * call_j)
        << "gap " << gap << ": the widest bar against " << call_j << " J over the call";
  }
}

// A 3 s call that took its value at 0.9 of its length, not at its start (where real reads take it is not
// known: docs/evidence/held-up-value-position.md). The reconciled split, assuming the first half, scaled the
// pieces either side 4-10x off and 397 of 8220 windows missed their bars there (up to 2.24x); the estimates
// beside a loose knot do not depend on where the value was taken, so the windows stay inside.
TEST(HeldUpRead, AValueTakenLateInACallHeldUpForSecondsLeavesEveryWindowInsideItsBar) {
  int outside = 0, windows = 0;
  for (Nanos begin = 2103ms; begin < 2200ms; begin += 30ms) {
    HeldUpReads gpu([](Nanos t) { return ((t - 0s) / 350ms) % 2 ? 120.0 : 400.0; });
    gpu.burst(105ms, 405ms);
    for (Nanos p = 1s; p <= 2s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
    gpu.read(begin, 3s, begin + 2700ms);
    const Nanos resume = (begin + 3s) / 100ms * 100ms + 100ms;
    for (Nanos p = resume; p <= resume + 6s; p += 500ms) gpu.read(p + 3ms, 1ms, p + 3ms);
    gpu.samples(resume + 6100ms);
    const EnergyAccounting accounting(gpu.trace);
    for (Nanos t0 = 1500ms; t0 < resume + 500ms; t0 += 25ms) {
      for (Nanos t1 : {resume + 50ms, resume + 5s, t0 + 100ms, t0 + 300ms, t0 + 1000ms}) {
        if (t1 <= t0) continue;
        const WindowEnergy window = accounting.energy(t0, t1);
        const double truth = gpu.energy_j(t0, t1);
        ASSERT_TRUE(window.joules);
        ++windows;
        if (std::abs(*window.joules - truth) > window.uncertainty_j) {
          ++outside;
          ADD_FAILURE() << "call from " << begin / 1ms << " ms, " << t0 / 1ms << "-" << t1 / 1ms
                        << " ms: " << *window.joules << " +- " << window.uncertainty_j << " J against "
                        << truth;
          if (outside > 10) return;
        }
      }
    }
  }
  EXPECT_GT(windows, 3000);
}

}  // namespace
}  // namespace wattwise::sampling
