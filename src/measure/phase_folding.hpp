#pragma once

// Memory bounded on month-long jobs. A job that marks every iteration sends tens of millions of markers a
// month (10 iterations a second on 8 ranks: 400 M), and keeping every one until the end, with every power
// sample near each (nothing merges within 0.25 s of a marker), grows by gigabytes a day. Once a job has
// marked many (kFoldAfterMarkers), its phases are folded while it runs: every minute the markers heard are
// paired as the job's end does it (workload::build_phases: per pid, rank and name, in arrival order), each
// occurrence that ended a few seconds ago is accounted from the trace of its own time (the energy
// accounting's figure over the samples still kept, the same as at the end) and added to its name's totals
// (count, time, energy, samples, flops, and the running mean and spread of its energy and duration), a
// bounded sample of the occurrences is kept for the JSON's list, and the markers folded are let go. The
// sampler then keeps the trace older than what the phases still open need one reading a minute
// (Sampler::coarsen_before), every reading near those phases' begins.
//
// The totals, means and CVs are those of the unbounded computation but for where each occurrence's
// figure came from: the accounting over the minutes around it, instead of over the whole trace. Each fold
// places the counter's knots on the posting grid learnt from every read so far (sampling::PostingGridLearner:
// a minute's own reads put it ~2 ms elsewhere) and finds the samples' offset from every stretch folded so
// far, the knots of reads held up past their postings placed first as the whole trace's accounting places
// them (sampling/held_up_reads.hpp): the whole job's grid and offset, and on a simulated 6-hour job of 8 GPUs marking sharp-edged 75 ms
// iterations the per-name figures within 4e-5 of the unbounded ones (docs/evidence/phase-folding.md).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "measure/measurement.hpp"
#include "sampling/alignment.hpp"
#include "sampling/trace.hpp"
#include "workload/marker.hpp"

namespace wattwise::measure {

using namespace std::chrono_literals;

// Folding begins once the job has sent this many markers (~5 minutes of 8 ranks marking 10 iterations a
// second; ~10 MB of markers): shorter or calmer jobs are accounted at their end as before.
inline constexpr std::size_t kFoldAfterMarkers = 50000;
// An occurrence is folded once it ended this long ago: the counter has been read past its end.
inline constexpr Nanos kFoldSettle = 5s;
// The trace kept before the earliest occurrence still to be accounted (the accounting's context).
inline constexpr Nanos kFoldMargin = 30s;
// The trace younger than this is never coarsened (the window server and live `tune` read it).
inline constexpr Nanos kFoldKeepRecent = 10min;
// Occurrences sampled per name for the JSON's list (its first always, the rest a uniform sample).
inline constexpr std::size_t kFoldedSamplePerName = 2000;
// How often `measure` folds while the job runs.
inline constexpr Nanos kFoldPeriod = 1min;

struct PhaseFoldingConfig {
  std::size_t fold_after_markers = kFoldAfterMarkers;
  std::size_t sample_per_name = kFoldedSamplePerName;
  Nanos keep_recent = kFoldKeepRecent;
  // Per GPU, the fine trace's offset to the counter when it is known beforehand (a replay, a test): each
  // fold then uses it instead of the one found from the stretches folded so far.
  std::vector<Nanos> known_offsets;
};

class PhaseFolder {
 public:
  // The traces of every measured GPU (Measurement::gpus order) from `since` on (Sampler::snapshot_since).
  using Snapshot = std::function<std::vector<sampling::GpuTrace>(Nanos since)>;

  // `job_gpus`: the positions of the GPUs the job used (rank r ran on the r-th); `gpu_count`: every
  // measured GPU.
  PhaseFolder(std::vector<std::size_t> job_gpus, std::size_t gpu_count, PhaseFoldingConfig config = {});

  // The markers heard since the last call, in arrival order.
  void add(std::vector<workload::Marker> markers);
  // Folds the occurrences that ended before now - kFoldSettle, once the job has marked many. Returns the
  // instant before which the trace is needed only near the open phases' begins (Sampler::coarsen_before),
  // or nullopt while nothing is folded.
  std::optional<Nanos> fold(Nanos now, const Snapshot& snapshot);
  // The begins of the phases still open in [from, to], sorted; safe from any thread (the sampler's
  // coarsening keeps the trace near them).
  std::vector<Nanos> open_begins(Nanos from, Nanos to) const;

  // The markers not folded, in arrival order (all of them when nothing was), and what was folded (nullopt:
  // nothing); both leave the folder empty.
  std::vector<workload::Marker> take_pending();
  std::optional<FoldedPhases> take_folded();
  // Markers the job's processes dropped, from every marker heard (workload::dropped_by_job's rule).
  long long dropped_by_job() const;
  // Markers held, not yet folded (the memory the folding bounds).
  std::size_t pending_count() const { return pending_.size(); }
  bool engaged() const { return folded_.has_value(); }

 private:
  void keep_in_sample(const PhaseInstance& instance);

  std::vector<std::size_t> job_gpus_;
  std::size_t gpu_count_;
  PhaseFoldingConfig config_;
  std::vector<workload::Marker> pending_;
  std::size_t heard_ = 0;
  std::map<int, long long> dropped_per_pid_;
  std::optional<FoldedPhases> folded_;
  struct Sample {
    std::uint64_t seen = 0;
    std::vector<PhaseInstance> kept;
  };
  std::map<std::string, Sample> samples_;
  std::mt19937_64 random_{20};
  // Per GPU, the fine trace's offset against the counter (sampling/alignment.hpp) from every stretch folded
  // so far, as the search over the whole trace finds it: a minute of a periodic load (an iteration per
  // counter posting) does not tell it on its own. A coarse grid over the whole search, then a fine one
  // around the coarse best of the first fold.
  struct GpuAlignment {
    std::optional<sampling::AlignmentSums> coarse;
    std::optional<sampling::AlignmentSums> fine;
    Nanos summed_until = Nanos::min();
    // The counter's posting grid from every read so far: each stretch's knots go to it.
    sampling::PostingGridLearner grid;
  };
  std::optional<Nanos> offset_after(GpuAlignment& alignment, const sampling::GpuTrace& trace);
  std::vector<GpuAlignment> alignments_;
  bool first_fold_done_ = false;
  mutable std::mutex open_mutex_;
  std::vector<Nanos> open_begins_;  // sorted
};

}  // namespace wattwise::measure
