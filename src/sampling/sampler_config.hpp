#pragma once

#include <chrono>
#include <cstddef>
#include <optional>

#include "core/clock.hpp"
#include "sampling/counter_schedule.hpp"
#include "sampling/sample_compaction.hpp"

namespace wattwise::sampling {

using namespace std::chrono_literals;

// Hardware floors (shared/reference/nvml-h100.md). The energy counter read costs ~2.7-2.9 ms on an H100
// and one thread reads all GPUs in turn, so a round over n GPUs needs n * 3 ms. The fast tick reads fields
// that cost microseconds, but they change only every ~100 ms: below 1 ms we would burn a core for nothing.
// The sample buffer holds ~2.4 s, so it is drained at least every second; draining faster than the
// samples arrive (20 ms) only returns empty batches.
inline constexpr Nanos kCounterReadBudget = 3ms;
// The counter is read on its own schedule by default (counter_schedule.hpp): locked to the device's
// postings, one read every kDefaultPostingsPerRead postings (docs/evidence/sampler-cpu.md,
// sampler-h100.md). A fixed period (--counter-interval) reads every period instead; its
// floor is n GPUs x 3 ms, and 10 ms was the default before phase locking (~40% of a core per GPU).
inline constexpr Nanos kLegacyCounterPeriod = 10ms;
// A read every 2 s at most: the buffered samples span 2.4 s, and the reconciliation needs counter intervals
// shorter than the buffer's gaps could hide.
inline constexpr unsigned kMaxPostingsPerRead = 20;
inline constexpr Nanos kMinFastPeriod = 1ms;
inline constexpr Nanos kDefaultFastPeriod = 20ms;
inline constexpr Nanos kMinDrainPeriod = 20ms;
inline constexpr Nanos kMaxDrainPeriod = 1s;
inline constexpr Nanos kDefaultDrainPeriod = 500ms;
inline constexpr Nanos kSampleBufferSpan = 2400ms;
// Clocks, utilisation, temperature and PCIe throughput change slowly and some of them are slow to read
// (NVML measures PCIe throughput over 20 ms per direction): they get their own, slower cadence so they
// never delay the power readings.
inline constexpr Nanos kDefaultTelemetryPeriod = 100ms;
inline constexpr Nanos kMinTelemetryPeriod = 10ms;
// PCIe throughput is read only when asked (--pcie-interval): each read blocks the one sampling thread ~21 ms
// per direction on an H100 (NVML measures over 20 ms), and no figure uses it. Asked, at most once a second.
inline constexpr Nanos kMinPciePeriod = 1s;

// A driver error while reading (UNKNOWN, TIMEOUT, ...) costs that one reading; this many failures in a row
// on one GPU's cadence mean the GPU is not coming back, and its sources are marked failed like a lost GPU
// (50 ms of counter reads, 0.5 s of telemetry at the default periods).
inline constexpr unsigned kMaxConsecutiveFailures = 5;

struct SamplerConfig {
  // Period between two counter reads of the same GPU, read at fixed times (the expert override
  // --counter-interval). Unset: phase-locked reads, one every `postings_per_read` postings.
  std::optional<Nanos> counter_period;
  Nanos fast_period = kDefaultFastPeriod;  // instantaneous + averaged power, telemetry (--interval)
  Nanos drain_period = kDefaultDrainPeriod;
  Nanos telemetry_period = kDefaultTelemetryPeriod;
  bool read_telemetry = true;
  // Unset: PCIe throughput is not read (the trace's pcie_* columns stay empty). Set: read every period, and
  // each telemetry reading carries the last values read.
  std::optional<Nanos> pcie_period{};
  // Buffered samples older than this are merged where the power is steady (sample_compaction.hpp), so a
  // long job's kept trace stops growing on steady stretches. Unset: every sample is kept.
  std::optional<Nanos> compact_samples_after = kDefaultCompactAfter;
  // Keep only the first and last of a run of equal readings (counter value, telemetry; powers within 1e-9
  // of the run's first). Nothing any figure is computed from is lost: the counter's timeline uses only the
  // reads around a change, and a run of equal powers integrates the same with its inner readings dropped
  // (to 1e-9). It bounds the memory of long simulated jobs, whose power is constant between their events;
  // the trace CSV then has fewer rows (so real measurements keep every reading).
  bool drop_repeated_readings = false;
  // The same for the instantaneous power (which changes every ~100 ms and is read every 20 ms) and the
  // telemetry (clocks, temperature, P-state stay put for seconds), also in real measurements: the trace
  // CSV has no row for a run's inner readings, and every figure is the same (docs/measure-json.md, "The kept
  // trace").
  bool drop_repeated_instant_and_telemetry = true;
  // Phase-locked schedule: read the counter just after every k-th posting (k x ~100 ms apart).
  unsigned postings_per_read = kDefaultPostingsPerRead;  // --counter-postings
};

// The periods the sampler really runs with.
struct SamplerPeriods {
  // Between two reads of the same GPU: the fixed period, or k postings of ~100 ms when phase-locked.
  Nanos counter_per_gpu{0};
  bool counter_phase_locked = true;
  Nanos fast{0};
  Nanos drain{0};
  Nanos telemetry{0};
  std::optional<Nanos> pcie;  // unset: not read
};

// Checks the configuration against the hardware floors; throws a usage error naming the minimum.
SamplerPeriods resolve_periods(const SamplerConfig& config, std::size_t gpu_count);

}  // namespace wattwise::sampling
