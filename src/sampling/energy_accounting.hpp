#pragma once

// Energy of any time window of one GPU's trace, and how it was obtained.
//
// Why it is built this way (facts from shared/reference/nvml-h100.md):
// - The total-energy counter is the only source that is right over long windows, but the device posts
//   a new value only every ~100 ms, so a value read at t describes the energy up to some instant up to
//   ~100 ms before t. Interpolating between reads smears a phase boundary by tens of ms: on 0.5 s phases
//   that alone made per-phase figures 8-25% wrong. So we do not interpolate reads; we locate the instants
//   at which the value changed (CounterTimeline: "knots") and trust the increments between knots.
// - The 20 ms buffered samples (else the instantaneous field) resolve short phases, but their time stamps
//   come from another clock and describe an interval whose position we do not know, and their level may
//   be a few % off. So we estimate their offset against the counter (the shift that best explains the
//   counter's increments, searched over +-150 ms, see alignment.hpp), and within each counter interval we
//   scale their integral to the counter's increment ("reconciliation"). Windows cut from this curve add
//   up to the counter over whole intervals and split each interval the way the fine trace says.
//   We take the counter's knots as the true time line; a latency of the counter's own posting is not
//   observable from these data and would show up as a common shift of every phase.
// - Whole-measurement windows are the counter difference itself (kCounter), the one figure with no
//   modelling in it. It describes the span between the postings of the first and last values read,
//   which differs from [first read, last read] by up to ~100 ms at each end, so phases that tile the
//   measurement sum to the total within the energy of those edges (well under 1% for runs of seconds).
// - A counter that goes down (driver reload, wrap) starts a new segment; the energy across the break is
//   taken from the fine trace at the overall scale, or from the neighbouring interval's power without one.
//   It never produces negative energy.
// - Without a counter we integrate what there is, best first (samples, instantaneous, averaged power; the
//   last lags a step by ~1 s and lost 10% in the reference run), and the method says so.

#include <cstddef>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/alignment.hpp"
#include "sampling/counter_timeline.hpp"
#include "sampling/posting_grid.hpp"
#include "sampling/power_curve.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

// How far a window may reach beyond a source's first or last reading and still be answered by it.
inline constexpr Nanos kCoverageTolerance = std::chrono::milliseconds(250);

// The counter's own increase around a window (the invariant of measure/energy_checks.hpp): over the reads
// that bracket [t0, t1] from outside (the last read at or before t0 to the first at or after t1) and from
// inside (the first read at or after t0 to the last at or before t1). The energy over the window lies in
// [inner - P * period, outer + P * period] for a GPU that never draws more than P: a read's value was posted
// up to one period before it.
struct CounterBrackets {
  std::optional<double> outer_j;  // absent when no read lies at or beyond either end
  double inner_j = 0;             // 0 with fewer than two reads inside
  Nanos posting_period{0};
};

// Relative error bars where there is no counter to reconcile with (shared/reference/nvml-h100.md: over a
// 10 s on/off load the instantaneous power read -1.1% and the 1 s average -10% against the counter; the
// 20 ms samples +0.13-0.5% over whole windows, a few % on sub-second phases).
inline constexpr double kSamplesRelativeBar = 0.05;
inline constexpr double kInstantRelativeBar = 0.05;
inline constexpr double kAverageRelativeBar = 0.15;

// The reconciled index of one trace: built once (cost linear in the trace, plus the offset search),
// then each window costs a few binary searches.
class EnergyAccounting {
 public:
  explicit EnergyAccounting(const GpuTrace& trace);
  // With the fine trace's offset known from a longer stretch of the same GPU (a long job's phases folded a
  // minute at a time, measure/phase_folding.hpp): a few minutes of a periodic load may not tell it.
  // With its posting grid known too (PostingGridLearner over the job so far), the counter's knots go to it.
  EnergyAccounting(const GpuTrace& trace, std::optional<Nanos> known_offset,
                   const std::optional<PostingGrid>& known_grid = std::nullopt);

  // Energy over [t0, t1] (t0 <= t1, else a usage error); nullopt joules when no source covers it.
  WindowEnergy energy(Nanos t0, Nanos t1) const;
  // The whole measurement: the counter difference when there is a counter.
  WindowEnergy total() const;

  // The counter alone, read by read: the increase between reads spread evenly over the time between them.
  // No fine trace, no knots: what every check falls back to (it always lies within the counter's brackets).
  // nullopt joules with fewer than two reads or a window outside them (beyond kCoverageTolerance).
  WindowEnergy counter_only(Nanos t0, Nanos t1) const;
  CounterBrackets brackets(Nanos t0, Nanos t1) const;

  // The fine trace's alignment to the counter, for the report; nullopt without both.
  std::optional<Alignment> alignment() const;
  // Stop using the fine trace (a check found its alignment impossible): every window is then the
  // counter's pieces spread evenly. Cheap; the pieces stay.
  void distrust_fine_trace();
  // Whether the counter's postings were placed on a fitted grid, and when the reads first knew it.
  bool has_grid() const { return has_grid_; }
  std::optional<Nanos> grid_known_at() const { return grid_known_at_; }
  Nanos posting_period() const { return posting_period_; }
  // The method sub-windows get within the counter's span: kSamplesReconciled, kInstantReconciled or
  // kCounter (interpolated between knots); kNone without a counter.
  EnergyMethod reconciled_method() const { return reconciled_method_; }

 private:
  struct Piece {
    Nanos begin{0};
    Nanos end{0};
    double start_j = 0;           // reconciled cumulative energy at `begin`
    double energy_j = 0;          // counter increment, or its estimate across a break
    std::optional<double> scale;  // counter / fine-trace energy; absent: spread evenly in time
    double fine_at_begin_j = 0;   // fine trace cumulative at begin + offset
    std::size_t fine_cursor = 0;  // the fine trace's cursor there: a window inside starts its search here
    Nanos begin_uncertainty{0};   // how far begin and end may be from the postings they stand for
    Nanos end_uncertainty{0};
    bool known = true;  // the counter measured energy_j (false: across a break, estimated)
  };

  void build_pieces();
  double unknown_piece_energy(std::size_t index, double fine_j) const;
  std::size_t first_piece_after(Nanos t) const;  // index of the first piece beginning after t, or size
  double reconciled_cumulative_j(Nanos t, bool use_fine) const;
  WindowEnergy unreconciled(Nanos t0, Nanos t1) const;
  double edge_uncertainty_j(Nanos t, bool use_fine) const;
  double knot_stretch_j(const Piece& piece, bool use_fine) const;
  double unknown_uncertainty_j(Nanos t0, Nanos t1) const;
  double offset_uncertainty_j(Nanos t) const;
  // The energy of the dropped-sample stretches t0 or t1 falls inside, or within the offset's uncertainty of
  // (offset: to the samples' time line); not reconciled, of every stretch the window meets.
  double sample_gaps_uncertainty_j(Nanos t0, Nanos t1, Nanos offset, bool reconciled) const;
  double counter_cumulative_j(Nanos t) const;

  // An edge's cumulative energy and how wrong it may be (energy_accounting_edges.cpp): where a knot beside
  // the edge is as uncertain as a call held up across many postings, the edge may be better placed from a
  // well-placed knot through the samples, or from the reads alone.
  struct EdgeEstimate {
    double cumulative_j = 0;
    double uncertainty_j = 0;
    bool reconciled = false;  // the reconciled split's, there being no other
  };
  bool beside_loose_knot(Nanos t) const;
  std::optional<EdgeEstimate> samples_over(Nanos lo, Nanos hi) const;
  std::optional<EdgeEstimate> anchored_edge(Nanos t, Nanos knot, Nanos knot_uncertainty, double knot_j) const;
  std::optional<EdgeEstimate> read_bracket_edge(Nanos t) const;
  EdgeEstimate best_edge(Nanos t, bool use_fine) const;
  // Where either edge lies beside a loose knot, the window narrowed by the edges' other estimates and by the
  // samples alone; nullopt elsewhere (every other window keeps the reconciled figure and bar).
  std::optional<WindowEnergy> beside_loose_knots(Nanos t0, Nanos t1, bool use_fine,
                                                 const WindowEnergy& reconciled) const;

  CounterTimeline counter_;
  PowerCurve samples_;
  PowerCurve instant_;
  PowerCurve average_;
  const PowerCurve* fine_ = nullptr;  // samples_ or instant_, or none
  std::vector<SampleGap> sample_gaps_;  // samples_'s, on its time line, sorted and apart
  std::vector<double> gaps_cumulative_j_;  // samples_'s energy over the first i gaps, i = 0..size
  Alignment alignment_;
  EnergyMethod reconciled_method_ = EnergyMethod::kNone;
  std::vector<Piece> pieces_;
  std::vector<Nanos> piece_begins_;
  double total_j_ = 0;
  double unknown_total_j_ = 0;  // of total_j_, estimated across breaks
  std::vector<Nanos> read_times_;        // every counter read, and the counter's cumulative increase there
  std::vector<double> read_cumulative_j_;
  // No later than each read's call began: its value was taken somewhere inside the call, at or after this
  // (the least start of it and every later read: never after the true start, and sorted for searches).
  std::vector<Nanos> read_starts_;
  std::vector<Nanos> read_costs_;  // how long each read's call took: how old its value may be
  bool has_grid_ = false;
  std::optional<Nanos> grid_known_at_;
  Nanos posting_period_ = kAssumedPostingPeriod;
  // The most the GPU was seen to draw (any sample, instantaneous reading or coarsened peak): what a stretch
  // of dropped samples may have drawn at most.
  double peak_power_w_ = 0;
};

// Convenience for a single window; builds the index each call.
WindowEnergy window_energy(const GpuTrace& trace, Nanos t0, Nanos t1);

}  // namespace wattwise::sampling
