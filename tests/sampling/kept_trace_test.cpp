// What the sampler keeps of a long job: runs of equal instantaneous power and telemetry keep their ends only,
// and buffered samples older than the compaction age are merged where the power is steady, with every figure
// the same (within the steadiness tolerance) as from the whole trace.
#include <gtest/gtest.h>

#include <algorithm>

#include "sampling/energy_accounting.hpp"
#include "sampling/power_curve.hpp"
#include "sampling/sample_compaction.hpp"
#include "simulate.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

SamplerConfig keep_everything() {
  SamplerConfig config;
  config.drop_repeated_instant_and_telemetry = false;
  config.compact_samples_after.reset();
  return config;
}

TEST(KeptTrace, InstantPowerKeepsOnlyTheEndsOfEachRunAndIntegratesTheSame) {
  // The field changes every 100 ms and is read every 20 ms: five readings a value, two kept.
  const auto power = [](Nanos t) { return 200.0 + 100.0 * static_cast<double>((t / 300ms) % 3); };
  SamplerConfig ends_only = keep_everything();
  ends_only.drop_repeated_instant_and_telemetry = true;
  const auto full = testing::simulate(power, {}, 20s, keep_everything());
  const auto kept = testing::simulate(power, {}, 20s, ends_only);
  EXPECT_LT(kept.trace.power_instant.size() * 2, full.trace.power_instant.size());
  EXPECT_LT(kept.trace.telemetry.size(), 5u) << "the fake's telemetry never changes";
  const PowerCurve a(full.trace.power_instant, PowerInterpolation::kTrapezoid);
  const PowerCurve b(kept.trace.power_instant, PowerInterpolation::kTrapezoid);
  for (Nanos t0 = 0s; t0 < 19s; t0 += 610ms)
    EXPECT_NEAR(a.integral_j(t0, t0 + 730ms), b.integral_j(t0, t0 + 730ms), 1e-9 * a.integral_j(0s, 20s));
}

TEST(KeptTrace, SamplesOlderThanTheCompactionAgeAreMergedWhereSteady) {
  SamplerConfig config = keep_everything();
  config.compact_samples_after = 5min;
  const auto sim = testing::simulate([](Nanos) { return 300.0; }, {}, 8min, config);
  const std::vector<PowerReading>& samples = sim.trace.power_samples;
  // Samples younger than the age stay at 50 a second, so do those of the batch not yet old enough
  // (kCompactionBatch); the older ones are merged into one a second.
  const std::size_t per_minute = 60 * 50;
  EXPECT_GT(samples.size(), 5 * per_minute);
  EXPECT_LT(samples.size(), 6 * per_minute + 3 * 60 + 10);
  const auto oldest =
      std::partition_point(samples.begin(), samples.end(), [](const PowerReading& r) { return r.t < 2min; });
  EXPECT_LE(oldest - samples.begin(), 2 * 60 + 2) << "the first two minutes at one sample a second";
  const PowerCurve curve(samples, PowerInterpolation::kIntervalMean);
  EXPECT_NEAR(curve.integral_j(10s, 7min), 300.0 * 410, 1e-9 * 300.0 * 410);
}

TEST(KeptTrace, CompactionKeepsTheEnergyOfOldPhases) {
  // 0.5 s on/off phases; after 4 minutes the first two are old and compacted where steady.
  const auto power = testing::square_wave(450, 500ms, 120, 500ms);
  SamplerConfig compacting = keep_everything();
  compacting.compact_samples_after = 1min;
  const auto full = testing::simulate(power, {}, 4min, keep_everything());
  const auto small = testing::simulate(power, {}, 4min, compacting);
  EXPECT_LT(small.trace.power_samples.size() * 4, full.trace.power_samples.size() * 3);
  const EnergyAccounting a(full.trace), b(small.trace);
  for (Nanos t0 = 1s; t0 < 115s; t0 += 7s) {  // an on phase and the off phase after it, in the old part
    for (const Nanos begin : {t0, t0 + 500ms}) {
      const auto x = a.energy(begin, begin + 500ms), y = b.energy(begin, begin + 500ms);
      ASSERT_TRUE(x.joules && y.joules);
      EXPECT_NEAR(*y.joules, *x.joules, kSteadyTolerance * *x.joules) << to_seconds(begin);
      EXPECT_NEAR(*y.joules, full.gpu->true_energy_j(begin, begin + 500ms), 0.03 * *x.joules);
    }
  }
}

TEST(KeptTrace, WithTheJobsPhaseEdgesKnownANoisyLoadIsCompactedAndItsPhasesKeepTheirEnergy) {
  // 10 s phases at 450 W and 120 W, every 20 ms interval up to +-5% off (nothing steady), phases cut at
  // the edges the markers would name: old samples merge away from the edges, and every phase reads the
  // energy it reads from the whole trace.
  const auto square = testing::square_wave(450, 10s, 120, 10s);
  const auto power = [square](Nanos t) {
    std::uint64_t x = static_cast<std::uint64_t>(t / 20ms) * 0x9E3779B97F4A7C15u;  // a mixed hash of the bin
    x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9u;
    x ^= x >> 32;
    return square(t) * (0.95 + static_cast<double>(x % 1001) / 10000.0);
  };
  const auto edges = [](Nanos from, Nanos to) {
    std::vector<Nanos> out;
    for (Nanos t = std::max(Nanos{0}, Nanos{from / 10s * 10s}); t <= to; t += 10s)
      if (t >= from) out.push_back(t);
    return out;
  };
  SamplerConfig compacting = keep_everything();
  compacting.compact_samples_after = 1min;
  const auto full = testing::simulate(power, {}, 8min, keep_everything());
  const auto small = testing::simulate(power, {}, 8min, compacting, edges);
  const auto steady_only = testing::simulate(power, {}, 8min, compacting);
  EXPECT_GT(steady_only.trace.power_samples.size() * 10, full.trace.power_samples.size() * 8)
      << "without edges little of a noisy load is steady enough to merge";
  EXPECT_LT(small.trace.power_samples.size() * 3, full.trace.power_samples.size())
      << "six of the eight minutes are old: their samples merge but near the edges";
  EXPECT_LT(small.trace.power_instant.size() * 3, full.trace.power_instant.size())
      << "the old instantaneous power is thinned the same way";
  // Telemetry kept whole (as a real GPU's, which changes at nearly every reading) is thinned by the same
  // rule: one reading a second in the old part, every one near an edge.
  EXPECT_LT(small.trace.telemetry.size() * 2, full.trace.telemetry.size())
      << "the old telemetry is thinned the same way";
  const auto near_edge = [](const std::vector<TelemetryReading>& readings, Nanos edge) {
    return std::count_if(readings.begin(), readings.end(), [edge](const TelemetryReading& r) {
      return r.t >= edge - kProtectedSpan && r.t <= edge + kProtectedSpan;
    });
  };
  for (Nanos edge = 10s; edge < 350s; edge += 10s)
    EXPECT_EQ(near_edge(small.trace.telemetry, edge), near_edge(full.trace.telemetry, edge))
        << to_seconds(edge);
  const EnergyAccounting a(full.trace), b(small.trace);
  for (Nanos begin = 10s; begin < 350s; begin += 10s) {  // every phase in the old part
    const auto x = a.energy(begin, begin + 10s), y = b.energy(begin, begin + 10s);
    ASSERT_TRUE(x.joules && y.joules);
    EXPECT_NEAR(*y.joules, *x.joules, 0.002 * *x.joules) << to_seconds(begin);
  }
}

}  // namespace
}  // namespace wattwise::sampling
