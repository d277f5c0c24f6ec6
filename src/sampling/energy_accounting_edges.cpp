// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").
//
// Window edges beside a loose knot: one of a read whose call was held up across more than kLooseKnotPostings
// postings (counter_timeline.cpp: on a sliver of a core an H100's reads took 1.7-7.9 s), as uncertain as the
// call. The reconciled split puts such an edge's cumulative energy anywhere the knot may be, and its bar says
// so (docs/evidence/pinned-h100.md, call 3: +-1056 J on a 45 s window); it also assumes the value was taken
// in the call's first half, which is not known (held-up-value-position.md: taken at 0.9 of a 3 s call,
// windows missed their bars by up to 2.2x). Three estimates depend on neither:
// - from the nearest well-placed knot on either side, the counter's value there less (or plus) what the
//   samples drew between the edge and that knot. Wrong by the samples' level (kSamplesRelativeBar), their
//   offset, the knot's own uncertainty, and whatever a stretch of dropped samples drew (the peak seen);
// - from the reads alone: the counter at the edge is at least the value of any read returned by then and at
//   most that of any read begun a posting after it (its value was posted after the edge);
// - for the window, the samples over it alone, wrong as above.
// Each holds the truth within its bar, so does their intersection: each edge takes that, the window the
// difference of its edges with the sum of their bars met with the samples' own figure. The reconciled split
// stands only where none of these is to be had or they do not meet. Every window with no loose knot beside
// either edge is left as it was.

#include <algorithm>
#include <cmath>
#include <limits>

#include "sampling/energy_accounting.hpp"

namespace wattwise::sampling {
namespace {

// Where the fine trace is not the samples (they did not cover the whole run), their offset was not fitted:
// it is taken as 0, uncertain by the offset search's range and a sample (alignment.hpp searches +-150 ms).
constexpr Nanos kUnfittedSamplesReach = std::chrono::milliseconds(170);
// A value posted at most a period before a read began: with the grid's jitter, a quarter more.
constexpr std::int64_t kPostingSlackQuarters = 5;
// Well-placed knots tried on each side of an edge, nearest first (each farther one adds the samples' error
// over the stretch between).
constexpr int kAnchorsPerSide = 3;

}  // namespace

bool EnergyAccounting::beside_loose_knot(Nanos t) const {
  if (pieces_.empty() || t < pieces_.front().begin || t > pieces_.back().end) return false;
  const std::size_t after = first_piece_after(t);
  const Piece& piece = pieces_[after == 0 ? 0 : after - 1];
  const Nanos loose = kLooseKnotPostings * posting_period_;
  return piece.begin_uncertainty > loose || piece.end_uncertainty > loose;
}

// What the samples drew over [lo, hi], and how wrong that may be: their level by kSamplesRelativeBar, their
// offset by its uncertainty (every shift allowed is tried), and at the shift that is the truth, the part of
// [lo, hi] in a stretch of dropped samples (the sample after it stands for all of it), or before the first
// sample or after the last, by the peak seen over that part. Nullopt where the samples are nowhere near.
std::optional<EnergyAccounting::EdgeEstimate> EnergyAccounting::samples_over(Nanos lo, Nanos hi) const {
  if (!samples_.usable()) return std::nullopt;
  const bool fitted = fine_ == &samples_;
  const Nanos offset = fitted ? alignment_.offset : Nanos{0};
  const Nanos reach =
      fitted ? std::max(kOffsetUncertainty, alignment_.offset_uncertainty) : kUnfittedSamplesReach;
  if (hi + offset + reach <= samples_.first() || lo + offset - reach >= samples_.last()) return std::nullopt;
  // Their level as they read it, known to kSamplesRelativeBar (shared/reference/nvml-h100.md), not the fitted
  // scale: fitted to pieces whose samples a late drain dropped, that was 15% off in the held-up test.
  const double stretch_j = samples_.integral_j(lo + offset, hi + offset);
  const auto dropped_at = [&](Nanos shift) {
    const Nanos from = lo + offset + shift, to = hi + offset + shift;
    Nanos dropped = std::clamp(samples_.first() - from, Nanos{0}, to - from) +
                    std::clamp(to - samples_.last(), Nanos{0}, to - from);
    auto gap = std::partition_point(sample_gaps_.begin(), sample_gaps_.end(),
                                    [&](const SampleGap& g) { return g.before <= from; });
    for (; gap != sample_gaps_.end() && gap->after < to; ++gap)
      dropped += std::min(gap->before, to) - std::max(gap->after, from);
    return std::min(dropped, to - from);
  };
  double error_j = 0;
  const Nanos step = std::max<Nanos>(std::chrono::milliseconds(5), reach / 16);
  for (Nanos shift = -reach; shift <= reach; shift += step) {
    const double shifted_j = samples_.integral_j(lo + offset + shift, hi + offset + shift);
    error_j = std::max(error_j, std::abs(shifted_j - stretch_j) + kSamplesRelativeBar * shifted_j +
                                    peak_power_w_ * to_seconds(dropped_at(shift)));
  }
  return EdgeEstimate{stretch_j, error_j};
}

// The edge at t from the knot at `knot` (uncertain by `knot_uncertainty`, the reconciled cumulative there
// `knot_j`) through the samples: also wrong by what they drew over the knot's uncertainty (the larger side).
std::optional<EnergyAccounting::EdgeEstimate> EnergyAccounting::anchored_edge(Nanos t, Nanos knot,
                                                                              Nanos knot_uncertainty,
                                                                              double knot_j) const {
  const auto stretch = samples_over(std::min(t, knot), std::max(t, knot));
  const auto before = samples_over(knot - knot_uncertainty, knot);
  const auto after = samples_over(knot, knot + knot_uncertainty);
  if (!stretch || !before || !after) return std::nullopt;
  const double knot_term_j =
      std::max(before->cumulative_j + before->uncertainty_j, after->cumulative_j + after->uncertainty_j);
  return EdgeEstimate{t < knot ? knot_j - stretch->cumulative_j : knot_j + stretch->cumulative_j,
                      stretch->uncertainty_j + knot_term_j};
}

// From the reads alone: at least the value of the last read returned at or before t, at most that of the
// first begun a posting (and a quarter) after t. Nullopt without both, or across a counter break (the reads'
// sum counts none across it, the pieces an estimate).
std::optional<EnergyAccounting::EdgeEstimate> EnergyAccounting::read_bracket_edge(Nanos t) const {
  if (counter_.has_break || read_times_.empty()) return std::nullopt;
  const auto returned = std::upper_bound(read_times_.begin(), read_times_.end(), t);
  const auto begun_after = std::lower_bound(read_starts_.begin(), read_starts_.end(),
                                            t + posting_period_ * kPostingSlackQuarters / 4);
  if (returned == read_times_.begin() || begun_after == read_starts_.end()) return std::nullopt;
  const double low_j = read_cumulative_j_[static_cast<std::size_t>(returned - read_times_.begin()) - 1];
  const double high_j = read_cumulative_j_[static_cast<std::size_t>(begun_after - read_starts_.begin())];
  if (high_j < low_j) return std::nullopt;
  return EdgeEstimate{(low_j + high_j) / 2, (high_j - low_j) / 2};
}

EnergyAccounting::EdgeEstimate EnergyAccounting::best_edge(Nanos t, bool use_fine) const {
  // Every estimate here holds the truth within its bar wherever the loose knot's value was taken: so does
  // their intersection. Not the reconciled split's, which holds only where that value came from the call's
  // first half (docs/evidence/held-up-value-position.md: taken at 0.9 of a 3 s call, its bars missed by up
  // to 2.2x, and met with these, by 347x). It stands where none of these is to be had, or should they not
  // meet.
  double low_j = -std::numeric_limits<double>::infinity(), high_j = std::numeric_limits<double>::infinity();
  const auto meet = [&](const std::optional<EdgeEstimate>& other) {
    if (!other) return;
    low_j = std::max(low_j, other->cumulative_j - other->uncertainty_j);
    high_j = std::min(high_j, other->cumulative_j + other->uncertainty_j);
  };
  meet(read_bracket_edge(t));
  if (!counter_.has_break) {  // the pieces' sum holds estimates across a break: no anchor beyond one
    // The nearest well-placed knots on each side of t: a piece's beginning, or the last piece's end. The
    // nearest is not always the best: one known to a period beside the samples' end is priced at the peak
    // over that period (call 3's end edge: +-230.8 J from the knot at 48.946 s, +-168.5 J from the one
    // after).
    const Nanos loose = kLooseKnotPostings * posting_period_;
    const std::size_t after = first_piece_after(t);
    const std::size_t index = after == 0 ? 0 : after - 1;
    int anchors = 0;
    for (std::size_t i = index + 1; i-- > 0 && anchors < kAnchorsPerSide;) {
      if (pieces_[i].begin_uncertainty > loose || pieces_[i].begin > t) continue;
      meet(anchored_edge(t, pieces_[i].begin, pieces_[i].begin_uncertainty, pieces_[i].start_j));
      ++anchors;
    }
    anchors = 0;
    for (std::size_t i = index + 1; i <= pieces_.size() && anchors < kAnchorsPerSide; ++i) {
      const bool last = i == pieces_.size();
      const Piece& piece = pieces_[last ? i - 1 : i];
      const Nanos knot = last ? piece.end : piece.begin;
      const Nanos uncertainty = last ? piece.end_uncertainty : piece.begin_uncertainty;
      if (uncertainty > loose || knot < t) continue;
      meet(anchored_edge(t, knot, uncertainty, last ? piece.start_j + piece.energy_j : piece.start_j));
      ++anchors;
    }
  }
  if (!(low_j <= high_j) || std::isinf(high_j - low_j)) {
    // The reconciled split, its bar with the dropped samples about t that the window's would add.
    EdgeEstimate split{reconciled_cumulative_j(t, use_fine), edge_uncertainty_j(t, use_fine), true};
    if (use_fine && fine_ == &samples_)
      split.uncertainty_j += sample_gaps_uncertainty_j(t, t, alignment_.offset, true);
    return split;
  }
  return EdgeEstimate{(low_j + high_j) / 2, (high_j - low_j) / 2};
}

std::optional<WindowEnergy> EnergyAccounting::beside_loose_knots(Nanos t0, Nanos t1, bool use_fine,
                                                                 const WindowEnergy& reconciled) const {
  if (!reconciled.joules || (!beside_loose_knot(t0) && !beside_loose_knot(t1))) return std::nullopt;
  // The window's energy lies within each of: the edges' estimates (each edge its own bar) and the samples
  // over the window alone; and it is not negative. So within their intersection.
  double low_j = 0, high_j = std::numeric_limits<double>::infinity();
  std::optional<EdgeEstimate> narrowest;
  const auto meet = [&](const EdgeEstimate& estimate) {
    low_j = std::max(low_j, estimate.cumulative_j - estimate.uncertainty_j);
    high_j = std::min(high_j, estimate.cumulative_j + estimate.uncertainty_j);
    if (!narrowest || estimate.uncertainty_j < narrowest->uncertainty_j) narrowest = estimate;
  };
  const EdgeEstimate begin = best_edge(t0, use_fine);
  const EdgeEstimate end = best_edge(t1, use_fine);
  const auto alone = samples_over(t0, t1);
  if (begin.reconciled && end.reconciled && !alone) return std::nullopt;  // nothing but the reconciled split
  meet({end.cumulative_j - begin.cumulative_j,
        begin.uncertainty_j + end.uncertainty_j + unknown_uncertainty_j(t0, t1)});
  if (alone) meet(*alone);
  if (low_j > high_j) return std::nullopt;  // one of them wrong after all: the reconciled figure stands
  // The figure of the narrowest estimate where the others allow it, its bar reaching both ends: no wider than
  // that estimate's own. Else the middle of what they allow.
  WindowEnergy e = reconciled;
  e.joules = narrowest->cumulative_j >= low_j && narrowest->cumulative_j <= high_j ? narrowest->cumulative_j
                                                                                   : (low_j + high_j) / 2;
  e.uncertainty_j = std::max(*e.joules - low_j, high_j - *e.joules);
  return e;
}

}  // namespace wattwise::sampling
