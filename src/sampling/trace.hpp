#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"

namespace wattwise::sampling {

// All times are on the monotonic time line of core/clock.hpp (Nanos since its epoch).

struct CounterReading {
  Nanos t{0};          // when the read returned
  Nanos read_cost{0};  // how long the read took (the value is from somewhere inside [t-cost, t])
  std::uint64_t energy_mj = 0;
};

struct PowerReading {
  Nanos t{0};
  double power_w = 0;
};

struct TelemetryReading {
  Nanos t{0};
  hw::Telemetry values;
};

// Why the sampler stopped reading a GPU during a measurement. From `at` on, that GPU was not called again;
// its trace ends there and so do the figures computed from it.
struct SourceFailure {
  Nanos at{0};            // when the call that decided it returned; for a call that never did, began
  bool gpu_lost = false;  // NVML said GPU_IS_LOST, or a call never returned (hung_call.hpp); else
                          // kMaxConsecutiveFailures readings failed in a row
  std::string error;      // the driver's one-line message (the call and its error)
  bool hung = false;      // a call never returned: calling this GPU again would block the caller as well
};

// A stretch whose buffered samples the device dropped: its buffer was drained later than it holds
// (kSampleBufferSpan since the last drain that succeeded), and the first sample found (`before`) lies more
// than 1.5 sample spacings after the last one seen (`after`; at the first drain, the start), on the samples'
// time line. That first sample is held over the whole stretch
// (PowerInterpolation::kIntervalMean): how the power was shaped inside it is unknown.
struct SampleGap {
  Nanos after{0};
  Nanos before{0};
};

// Gaps as the accounting looks them up (a binary search at every window edge): each the right way round,
// sorted, and apart. Drains record them in order, but a clock stepped between two drains need not leave
// them so, nor apart: overlapping ones are one. Nor the right way round: each end is mapped with its own
// drain's wall-clock offset, and a step forward longer than the gap inverts it (its energy then came off the
// bars, and an edge inside it was not found). A file put together by hand may hold overlapping ones too.
inline std::vector<SampleGap> disjoint_sample_gaps(std::vector<SampleGap> gaps) {
  for (SampleGap& gap : gaps)
    if (gap.before < gap.after) std::swap(gap.after, gap.before);
  std::sort(gaps.begin(), gaps.end(), [](const SampleGap& a, const SampleGap& b) { return a.after < b.after; });
  std::size_t kept = 0;
  for (const SampleGap& gap : gaps) {
    if (kept > 0 && gap.after < gaps[kept - 1].before) {
      gaps[kept - 1].before = std::max(gaps[kept - 1].before, gap.before);
    } else {
      gaps[kept++] = gap;
    }
  }
  gaps.resize(kept);
  return gaps;
}

// Counter reads held up inside their call (kHeldUpCounterRead or more), and the longest call of those counted
// over, held up or not.
struct HeldUpCalls {
  std::uint64_t reads = 0;
  Nanos longest{0};
};

// Everything sampled from one GPU during one measurement.
struct GpuTrace {
  unsigned gpu_index = 0;
  std::vector<CounterReading> energy;       // total-energy counter
  std::vector<PowerReading> power_instant;  // instantaneous power field
  std::vector<PowerReading> power_average;  // ~1 s averaged power
  std::vector<PowerReading> power_samples;  // buffered 20 ms samples, device time mapped to monotonic
  std::vector<SampleGap> sample_gaps;       // where power_samples lost readings (late drains), in time order
  std::vector<TelemetryReading> telemetry;  // clocks, utilisation, temperature, ...
  std::optional<SourceFailure> failure;     // set when the GPU's sources failed during the measurement
  std::uint64_t failed_readings = 0;  // readings lost to a momentary driver error (UNKNOWN, TIMEOUT, ...)
  // Counter reads that began more than kLateCounterRead after they were due: the sampling thread did not
  // get the CPU when it asked (a starved node). Their brackets are wider than planned; so are the bars.
  std::uint64_t late_counter_reads = 0;
  Nanos max_counter_read_delay{0};
  // Of the counter reads a long job's coarsening thinned away (Sampler::coarsen_before), those held up and
  // the longest call of the stretches it thinned: `energy` no longer holds them, and a count of held-up reads
  // is of them all.
  HeldUpCalls thinned_held_up;
  // The peak of the finest power readings (the buffered samples, else the instantaneous power) that a long
  // job's coarsening merged away (Sampler::coarsen_before); absent when none was.
  std::optional<double> coarsened_peak_w;
};

// A counter read this late was held up by something other than the driver's own ~4 ms.
inline constexpr Nanos kLateCounterRead = std::chrono::milliseconds(50);
// A counter read whose call lasted a posting period or more: its value may be from before a posting it
// spans (a read costs 4-9 ms of CPU on an H100, 12-86 ms on a node whose every core is busy; on a sliver of
// a core 0.1-4.5 s: docs/evidence/pinned-h100.md). Counted apart from late reads, which began late.
inline constexpr Nanos kHeldUpCounterRead = std::chrono::milliseconds(100);

// Of reads[from, to).
inline HeldUpCalls held_up_calls(const std::vector<CounterReading>& reads, std::size_t from, std::size_t to) {
  HeldUpCalls calls;
  for (std::size_t i = from; i < std::min(to, reads.size()); ++i) {
    calls.reads += reads[i].read_cost >= kHeldUpCounterRead;
    calls.longest = std::max(calls.longest, reads[i].read_cost);
  }
  return calls;
}

// How a figure of energy was obtained; printed next to every number.
enum class EnergyMethod {
  kCounter,            // difference of the total-energy counter (long windows)
  kSamplesReconciled,  // 20 ms buffered samples, aligned and scaled to the counter's increments
  kInstantReconciled,  // instantaneous power, scaled to the counter's increments
  kSamples,            // buffered samples integrated (no counter)
  kInstantPower,       // instantaneous power integrated, trapezoid (no counter)
  kAveragePower,       // averaged power integrated (no better source; lags ~1 s)
  kNone,               // nothing usable
};

const char* to_string(EnergyMethod method);

struct WindowEnergy {
  std::optional<double> joules;  // absent when no source covers the window
  EnergyMethod method = EnergyMethod::kNone;
  // The error bar: the true energy lies within joules +- uncertainty_j, from what the accounting knows (the
  // counter's brackets, where its postings are placed, how well the fine trace explained the counter, late
  // reads). 0 with no joules.
  double uncertainty_j = 0;
  // The begins of the first and last counter pieces the window touches, where the bar comes from the
  // reconciled accounting (EnergyAccounting::energy). Windows touching the same piece share its errors (the
  // piece's scale against the fine trace, where its knots lie: a piece 10% low makes every window in it
  // low), so a sum of windows adds their bars linearly over a chain of windows sharing pieces and in
  // quadrature across chains (measure::SummedBar). Absent: the bar is the window's own.
  std::optional<std::pair<Nanos, Nanos>> pieces = std::nullopt;
};

}  // namespace wattwise::sampling
