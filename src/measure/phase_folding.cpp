#include "measure/phase_folding.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

#include "measure/attribution.hpp"
#include "sampling/counter_timeline.hpp"
#include "sampling/energy_accounting.hpp"
#include "sampling/held_up_reads.hpp"
#include "sampling/power_curve.hpp"

namespace wattwise::measure {
namespace {

// As workload::build_phases: per (pid, rank, name), a job without ranks at -1.
using PhaseKey = std::tuple<int, int, std::string>;

PhaseKey key_of(const workload::Marker& marker) {
  return {marker.pid, marker.rank.value_or(-1), marker.name};
}

// A snapshot's counter reads begin this long after its fine trace begins (its first piece, a posting before
// the first read, then lies inside the fine trace) and end this long before the fine trace ends.
constexpr Nanos kSnapshotCounterLag = std::chrono::milliseconds(500);

// The offset's search (as estimate_alignment's): +-150 ms by 5 ms, then +-20 ms by 0.25 ms around the first
// fold's best.
constexpr Nanos kOffsetSearch = std::chrono::milliseconds(150);
constexpr Nanos kOffsetCoarseStep = std::chrono::milliseconds(5);
constexpr Nanos kOffsetFineSpan = std::chrono::milliseconds(20);
constexpr Nanos kOffsetFineStep = std::chrono::microseconds(250);

workload::Phase phase_from(const workload::Marker& begin, Nanos end) {
  return workload::Phase{begin.name, begin.t, end, begin.counters, begin.pid, begin.rank, 0};
}

}  // namespace

PhaseFolder::PhaseFolder(std::vector<std::size_t> job_gpus, std::size_t gpu_count, PhaseFoldingConfig config)
    : job_gpus_(std::move(job_gpus)), gpu_count_(gpu_count), config_(config) {}

void PhaseFolder::add(std::vector<workload::Marker> markers) {
  heard_ += markers.size();
  for (auto& marker : markers) {
    if (marker.dropped_before)
      dropped_per_pid_[marker.pid] = std::max(dropped_per_pid_[marker.pid], *marker.dropped_before);
    pending_.push_back(std::move(marker));
  }
}

long long PhaseFolder::dropped_by_job() const {
  long long sum = 0;
  for (const auto& [pid, dropped] : dropped_per_pid_) sum += dropped;
  return sum;
}

void PhaseFolder::keep_in_sample(const PhaseInstance& instance) {
  Sample& sample = samples_[instance.phase.name];
  ++sample.seen;
  const std::size_t cap = std::max<std::size_t>(config_.sample_per_name, 2);
  if (sample.kept.size() < cap) {
    sample.kept.push_back(instance);
    return;
  }
  // Reservoir sampling over all but the first (kept[0] stays: the list keeps each name's first).
  std::uniform_int_distribution<std::uint64_t> pick(0, sample.seen - 2);
  const std::uint64_t slot = pick(random_);
  if (slot < cap - 1) sample.kept[1 + slot] = instance;
}

std::optional<Nanos> PhaseFolder::fold(Nanos now, const Snapshot& snapshot) {
  if (!folded_) {
    if (heard_ < config_.fold_after_markers) return std::nullopt;
    folded_.emplace();
  }
  const Nanos settled = now - kFoldSettle;
  // Pairing as build_phases does; an occurrence that ended before `settled` is folded with its markers.
  // Taking a matched begin and end out of the sequence leaves every other pairing as it was, and an
  // unmatched end stays unmatched whatever comes later: both may go.
  std::map<PhaseKey, std::vector<std::size_t>> open;
  std::vector<char> gone(pending_.size(), 0);
  std::vector<workload::Phase> ready;
  Nanos needed_from = settled;  // the earliest begin of an occurrence ended but not yet folded
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const workload::Marker& marker = pending_[i];
    switch (marker.kind) {
      case workload::MarkerKind::kPoint: {
        if (marker.t > settled) {
          needed_from = std::min(needed_from, marker.t);
          break;
        }
        workload::Phase phase = phase_from(marker, marker.t);
        auto it = open.find(key_of(marker));
        phase.same_name_depth = it == open.end() ? 0 : static_cast<int>(it->second.size());
        ready.push_back(std::move(phase));
        gone[i] = 1;
        break;
      }
      case workload::MarkerKind::kBegin:
        open[key_of(marker)].push_back(i);
        break;
      case workload::MarkerKind::kEnd: {
        auto& stack = open[key_of(marker)];
        if (stack.empty() || marker.t < pending_[stack.back()].t) {
          ++folded_->unmatched_ends;
          gone[i] = 1;
          break;
        }
        const std::size_t begin = stack.back();
        stack.pop_back();
        if (marker.t > settled) {
          needed_from = std::min(needed_from, pending_[begin].t);
          break;
        }
        workload::Phase phase = phase_from(pending_[begin], marker.t);
        for (const auto& [key, value] : marker.counters) phase.counters[key] = value;
        phase.same_name_depth = static_cast<int>(stack.size());
        ready.push_back(std::move(phase));
        gone[i] = gone[begin] = 1;
        break;
      }
    }
  }
  // The end's order of the occurrences (build_phases): by begin, outer before inner.
  std::stable_sort(ready.begin(), ready.end(), [](const workload::Phase& a, const workload::Phase& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    return a.end > b.end;
  });
  if (!ready.empty()) {
    // The first fold reads everything sampled so far (the offsets' first stretch).
    std::vector<sampling::GpuTrace> traces =
        snapshot(first_fold_done_ ? ready.front().begin - kFoldMargin : Nanos::min());
    first_fold_done_ = true;
    // Each GPU's posting grid from every read so far (the snapshot's, before they are cut below): the
    // stretch's own reads would place it elsewhere (sampling::PostingGridLearner).
    alignments_.resize(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i)
      alignments_[i].grid.add(sampling::posting_brackets(traces[i].energy));
    // The counter's span must lie inside the fine trace's for the fine trace to be used: its first piece
    // begins a posting before the first read kept, so the reads begin a little after the samples do.
    for (auto& trace : traces) {
      const auto& fine = !trace.power_samples.empty() ? trace.power_samples : trace.power_instant;
      if (fine.empty()) continue;
      const Nanos from = fine.front().t + kSnapshotCounterLag;
      const auto first = std::find_if(trace.energy.begin(), trace.energy.end(),
                                      [&](const sampling::CounterReading& r) { return r.t >= from; });
      trace.energy.erase(trace.energy.begin(), first);
      // Likewise at the end: the samples are drained every half second, the counter read up to now.
      const Nanos until = fine.back().t - kSnapshotCounterLag;
      while (!trace.energy.empty() && trace.energy.back().t > until) trace.energy.pop_back();
    }
    std::vector<sampling::EnergyAccounting> accountants;
    accountants.reserve(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i) {
      accountants.emplace_back(traces[i],
                               i < config_.known_offsets.size() ? std::optional<Nanos>(config_.known_offsets[i])
                                                                : offset_after(alignments_[i], traces[i]),
                               alignments_[i].grid.grid());
    }
    // A GPU that failed has figures up to its last counter read (attribute_energy's covered_until).
    const auto covered = [&](std::size_t pos, Nanos end) {
      if (pos >= traces.size()) return false;
      const sampling::GpuTrace& trace = traces[pos];
      return !trace.failure || (!trace.energy.empty() && end <= trace.energy.back().t);
    };
    const WindowEnergyFn window = [&](std::size_t pos, Nanos t0, Nanos t1) {
      return pos < accountants.size() ? accountants[pos].energy(t0, t1) : sampling::WindowEnergy{};
    };
    for (const workload::Phase& phase : ready) {
      PhaseInstance inst = account_phase(phase, gpu_count_, job_gpus_, covered, window);
      if (phase.same_name_depth == 0) folded_->totals.add(inst);
      keep_in_sample(inst);
      ++folded_->instances;
    }
  }
  std::vector<workload::Marker> kept;
  kept.reserve(pending_.size() - static_cast<std::size_t>(std::count(gone.begin(), gone.end(), 1)));
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (gone[i]) {
      ++folded_->markers;
    } else {
      kept.push_back(std::move(pending_[i]));
    }
  }
  pending_ = std::move(kept);
  // Every begin still held (the open phases', and those of occurrences ended too recently to fold).
  std::vector<Nanos> begins;
  for (const auto& marker : pending_)
    if (marker.kind == workload::MarkerKind::kBegin) begins.push_back(marker.t);
  std::sort(begins.begin(), begins.end());
  {
    std::lock_guard lock(open_mutex_);
    open_begins_ = std::move(begins);
  }
  return std::min(needed_from - kFoldMargin, now - config_.keep_recent);
}

std::optional<Nanos> PhaseFolder::offset_after(GpuAlignment& alignment, const sampling::GpuTrace& trace) {
  const bool samples = !trace.power_samples.empty();
  const sampling::PowerCurve fine(samples ? trace.power_samples : trace.power_instant,
                                  samples ? sampling::PowerInterpolation::kIntervalMean
                                          : sampling::PowerInterpolation::kTrapezoid);
  sampling::CounterTimeline counter = sampling::build_counter_timeline(trace.energy, alignment.grid.grid());
  if (sampling::has_ambiguous_knots(counter)) {
    // Knots of reads held up past their postings may each stand a period late; fitted where they were put,
    // a run of them pulls the offset by tens of ms (held_up_reads.hpp). As the whole trace's accounting does
    // (energy_accounting.cpp), they are placed at an offset fitted without them (the stretches summed so
    // far, else this one's own) and only then summed: its final offset, from the knots placed.
    const sampling::CounterTimeline without = sampling::without_ambiguous_knots(counter);
    const std::optional<Nanos> offset = alignment.fine ? alignment.fine->best() : std::nullopt;
    const sampling::Alignment judged =
        offset ? sampling::alignment_at(without, fine, *offset) : sampling::estimate_alignment(without, fine);
    sampling::place_ambiguous_knots(counter.pieces, &fine, judged);
  }
  if (!alignment.coarse) {
    alignment.coarse.emplace(-kOffsetSearch, kOffsetCoarseStep, 2 * kOffsetSearch / kOffsetCoarseStep + 1);
    alignment.coarse->add(counter, fine, alignment.summed_until);
    const auto center = alignment.coarse->best();
    if (!center) {  // too little yet: begin again at the next fold
      alignment.coarse.reset();
      return std::nullopt;
    }
    alignment.fine.emplace(*center - kOffsetFineSpan, kOffsetFineStep, 2 * kOffsetFineSpan / kOffsetFineStep + 1);
    alignment.summed_until = alignment.fine->add(counter, fine, alignment.summed_until);
  } else {
    alignment.coarse->add(counter, fine, alignment.summed_until);
    alignment.summed_until = alignment.fine->add(counter, fine, alignment.summed_until);
  }
  return alignment.fine->best();
}

std::vector<Nanos> PhaseFolder::open_begins(Nanos from, Nanos to) const {
  std::lock_guard lock(open_mutex_);
  if (to < from) return {};
  return {std::lower_bound(open_begins_.begin(), open_begins_.end(), from),
          std::upper_bound(open_begins_.begin(), open_begins_.end(), to)};
}

std::vector<workload::Marker> PhaseFolder::take_pending() {
  return std::exchange(pending_, {});
}

std::optional<FoldedPhases> PhaseFolder::take_folded() {
  if (!folded_) return std::nullopt;
  FoldedPhases folded = std::move(*folded_);
  folded_.reset();
  for (auto& [name, sample] : samples_)
    for (auto& inst : sample.kept) folded.sample.push_back(std::move(inst));
  samples_.clear();
  std::stable_sort(folded.sample.begin(), folded.sample.end(), [](const PhaseInstance& a, const PhaseInstance& b) {
    if (a.phase.begin != b.phase.begin) return a.phase.begin < b.phase.begin;
    return a.phase.end > b.phase.end;
  });
  return folded;
}

}  // namespace wattwise::measure
