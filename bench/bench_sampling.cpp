// Costs of our own sampling and accounting code, without NVML: the sampler's ticks against a GPU that
// answers from memory, and window accounting over a trace of 10^7 buffered samples (~55 h at 20 ms): the
// index build, the offset search inside it, and a window query.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "../tests/support/in_memory_gpu.hpp"
#include "hw/gpu.hpp"
#include "sampling/energy_accounting.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

using wattwise::testing::InMemoryGpu;

// Runs one cadence per iteration; the stores are emptied now and then (untimed) to bound memory.
template <typename Tick>
void run_ticks(benchmark::State& state, Tick tick) {
  InMemoryGpu gpu;
  VirtualClock clock(1s);
  Sampler sampler({&gpu}, clock);
  sampler.begin(clock.now());
  std::int64_t n = 0;
  for (auto _ : state) {
    tick(sampler, Nanos{++n});
    if (n % 100'000 == 0) {
      state.PauseTiming();
      benchmark::DoNotOptimize(sampler.take_traces());
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_SamplerCounterTick(benchmark::State& state) {
  run_ticks(state, [](Sampler& s, Nanos now) { s.sample_counters(now); });
}
void BM_SamplerFastTick(benchmark::State& state) {
  run_ticks(state, [](Sampler& s, Nanos now) { s.sample_fast(now); });
}
void BM_SamplerDrain25Samples(benchmark::State& state) {
  run_ticks(state, [](Sampler& s, Nanos now) { s.drain_samples(now); });
}
BENCHMARK(BM_SamplerCounterTick);
BENCHMARK(BM_SamplerFastTick);
BENCHMARK(BM_SamplerDrain25Samples);

// A 0.2 s / 0.5 s square wave: 10^7 samples (20 ms means, stamped 40 ms late) and the counter as an
// H100 posts it (every 100 ms), polled every 50 ms.
constexpr double kOnW = 600, kOffW = 100;
constexpr Nanos kOn = 200ms, kPeriod = 700ms;

double energy_until_j(Nanos t) {
  const std::int64_t periods = t / kPeriod;
  const Nanos phase = t - kPeriod * periods;
  const double per_period_j = kOnW * to_seconds(kOn) + kOffW * to_seconds(kPeriod - kOn);
  const double partial_j =
      phase < kOn ? kOnW * to_seconds(phase) : kOnW * to_seconds(kOn) + kOffW * to_seconds(phase - kOn);
  return per_period_j * static_cast<double>(periods) + partial_j;
}

const GpuTrace& big_trace() {
  static const GpuTrace trace = [] {
    GpuTrace t;
    constexpr std::int64_t kSamples = 10'000'000;
    t.power_samples.reserve(kSamples);
    for (std::int64_t k = 1; k <= kSamples; ++k) {
      const Nanos end = 20ms * k;
      t.power_samples.push_back({end + 40ms, (energy_until_j(end) - energy_until_j(end - 20ms)) / 0.02});
    }
    const Nanos duration = 20ms * kSamples;
    t.energy.reserve(static_cast<std::size_t>(duration / 50ms) + 1);
    for (Nanos read = 100ms; read < duration; read += 50ms) {
      const Nanos posted = (read - 3700us) / 100ms * 100ms + 3700us;
      t.energy.push_back(
          {read, 0ns, static_cast<std::uint64_t>(std::llround(energy_until_j(posted) * 1000))});
    }
    return t;
  }();
  return trace;
}

void BM_AccountingBuild10MSamples(benchmark::State& state) {
  const GpuTrace& trace = big_trace();
  for (auto _ : state) {
    EnergyAccounting accounting(trace);
    benchmark::DoNotOptimize(accounting.alignment());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(trace.power_samples.size()));
}
BENCHMARK(BM_AccountingBuild10MSamples)->Unit(benchmark::kMillisecond)->Iterations(3);

// The offset search alone (estimate_alignment: +-150 ms in 5 ms steps, then 0.25 ms steps), on the same
// trace: the part of the build that depends on the trace's length times the number of candidate shifts.
// offset_ms reports what it found (the samples are stamped 40 ms late).
void BM_OffsetSearch10MSamples(benchmark::State& state) {
  const CounterTimeline counter = build_counter_timeline(big_trace().energy);
  const PowerCurve samples(big_trace().power_samples, PowerInterpolation::kIntervalMean);
  Alignment alignment;
  for (auto _ : state) {
    alignment = estimate_alignment(counter, samples);
    benchmark::DoNotOptimize(alignment);
  }
  state.counters["offset_ms"] = to_seconds(alignment.offset) * 1e3;
  state.counters["intervals"] = static_cast<double>(alignment.intervals);
}
BENCHMARK(BM_OffsetSearch10MSamples)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AccountingWindowQuery10MSamples(benchmark::State& state) {
  static const EnergyAccounting accounting(big_trace());
  const Nanos span = big_trace().power_samples.back().t - 1s;
  std::mt19937_64 random(42);
  std::uniform_int_distribution<std::int64_t> start_ns(1'000'000'000, span.count() - 1'000'000'000);
  for (auto _ : state) {
    const Nanos start{start_ns(random)};
    benchmark::DoNotOptimize(accounting.energy(start, start + 500ms));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AccountingWindowQuery10MSamples);

}  // namespace
}  // namespace wattwise::sampling

BENCHMARK_MAIN();
