#pragma once

// Each iteration's energy while the job runs, from the sampler's readings so far.
//
// How (docs/tune.md "Energy of an iteration"): a copy of the job GPUs' readings from a little before the
// window on (Sampler::snapshot_since) is indexed by the same EnergyAccounting that `measure` uses, given the
// fine trace only: the 20 ms buffered samples (else the instantaneous power) integrated over the
// iteration's window (method `samples`). Not reconciled to the counter, on purpose: on a copy of a few
// seconds the counter's update instants cannot be placed (the posting grid is learned from the dense reads
// at the start of the run, which the copy lacks; reads ~0.5 s apart leave each instant anywhere between two
// reads), and scaling the samples to increments between misplaced instants moved identical iterations by
// up to +-20% (6% CV on a constant load of the fake driver). The samples' own level may be a few percent
// off the counter, but the same for every setting, so it cancels in the tuner's metrics, which are
// normalised to the start's. Only a GPU without any power reading falls back to the counter (interpolated
// between its reads, a read 150 ms past the window's end required).
//
// A window is answered once the readings cover it: samples drained past its end (they are drained every
// 0.5 s), so energy arrives up to ~0.5 s after an iteration ends; the live loop feeds iterations in order
// as they resolve. The sum is over the job's GPUs; a GPU that has failed leaves the energy absent (the
// iteration then counts for time only).

#include <cstddef>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/sampler.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

struct EnergyWindow {
  Nanos begin{0};
  Nanos end{0};
};

// A window's energy once it is known: joules absent when no source covers it on some job GPU.
struct ResolvedEnergy {
  std::optional<double> joules;
  EnergyMethod method = EnergyMethod::kNone;
};

// For a GPU with a counter but no power reading: how long after a window's end a counter read must come
// before the window is answered (the value is posted every ~100 ms and can be that old when read).
inline constexpr Nanos kCounterPastEnd = std::chrono::milliseconds(150);
// How much of the readings before the first window go into the copy: a margin for the first reading
// before the window (and a few counter reads for a GPU that has only a counter).
inline constexpr Nanos kHistoryBefore = std::chrono::seconds(2);

// Whether the readings of one GPU cover a window ending at `end` (see the header's comment).
bool covers(const GpuTrace& trace, Nanos end);

// The energy of `windows` (in time order) summed over the given traces' GPUs, for the leading windows the
// traces cover; the result is shorter than `windows` when the later ones are not covered yet.
std::vector<ResolvedEnergy> resolve_windows(const std::vector<GpuTrace>& traces,
                                            const std::vector<EnergyWindow>& windows);

// resolve_windows over a snapshot of the sampler's job GPUs taken now.
class LiveEnergy {
 public:
  LiveEnergy(const Sampler& sampler, std::vector<std::size_t> job_gpus)
      : sampler_(sampler), job_gpus_(std::move(job_gpus)) {}
  std::vector<ResolvedEnergy> resolve(const std::vector<EnergyWindow>& windows) const;

 private:
  const Sampler& sampler_;
  std::vector<std::size_t> job_gpus_;
};

}  // namespace wattwise::sampling
