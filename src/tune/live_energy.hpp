#pragma once

// Each iteration's energy while the job runs, from the sampler's readings so far.
//
// How (docs/tune.md "Energy of an iteration"): a snapshot of the job GPUs' readings from a little before the
// window on (Sampler::snapshot_since) is indexed by the same EnergyAccounting that `measure` uses for
// phases: the 20 ms buffered samples (else the instantaneous power) cut at the iteration's edges, scaled
// within each of the counter's ~100 ms intervals to the counter's increment. A window is answered only once
// the readings cover it: a counter read some postings after its end (the counter is read every ~5th
// posting, ~0.5 s) and drained samples past its end (drained every 0.5 s). So energy arrives ~0.5-1 s after
// an iteration ends; the live loop feeds iterations in order as they resolve. The sum is over the job's
// GPUs; a GPU that has failed leaves the energy absent (the iteration then counts for time only).

#include <cstddef>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/sampler.hpp"
#include "sampling/trace.hpp"

namespace wattwise::tune {

struct EnergyWindow {
  Nanos begin{0};
  Nanos end{0};
};

// A window's energy once it is known: joules absent when no source covers it on some job GPU.
struct ResolvedEnergy {
  std::optional<double> joules;
  sampling::EnergyMethod method = sampling::EnergyMethod::kNone;
};

// How long after a window's end a counter read must come before the window is answered: the counter's
// value is posted every ~100 ms and can be that old when read, so a read 150 ms after the end has seen a
// posting after it.
inline constexpr Nanos kCounterPastEnd = std::chrono::milliseconds(150);
// How much of the readings before the first window go into the index: a few counter reads (one every
// ~0.5 s) for the reconciliation, and enough of the fine trace for its alignment to the counter.
inline constexpr Nanos kHistoryBefore = std::chrono::seconds(2);

// Whether the readings of one GPU cover a window ending at `end` (see the header's comment).
bool covers(const sampling::GpuTrace& trace, Nanos end);

// The energy of `windows` (in time order) summed over the given traces' GPUs, for the leading windows the
// traces cover; the result is shorter than `windows` when the later ones are not covered yet.
std::vector<ResolvedEnergy> resolve_windows(const std::vector<sampling::GpuTrace>& traces,
                                            const std::vector<EnergyWindow>& windows);

// resolve_windows over a snapshot of the sampler's job GPUs taken now.
class LiveEnergy {
 public:
  LiveEnergy(const sampling::Sampler& sampler, std::vector<std::size_t> job_gpus)
      : sampler_(sampler), job_gpus_(std::move(job_gpus)) {}
  std::vector<ResolvedEnergy> resolve(const std::vector<EnergyWindow>& windows) const;

 private:
  const sampling::Sampler& sampler_;
  std::vector<std::size_t> job_gpus_;
};

}  // namespace wattwise::tune
