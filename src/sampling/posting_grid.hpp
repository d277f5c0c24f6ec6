#pragma once

#include <optional>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::sampling {

// The energy counter is posted on a regular clock: every ~100 ms on an H100 (96-104 ms between observed
// changes, shared/reference/nvml-h100.md), at a phase nobody tells us. Both the read schedule (which reads
// just after predicted postings) and the counter timeline (which puts each increment's end on its posting)
// learn that grid from brackets: two reads between which the value changed.

// Only a starting guess: each GPU's own period is fitted once brackets span kPeriodFitMinPeriods postings.
inline constexpr Nanos kAssumedPostingPeriod = std::chrono::milliseconds(100);
// A bracket narrower than this fraction of the period holds exactly one posting (two would need a full
// period between them); wider ones are ignored by the fit.
inline constexpr double kSinglePostingWidth = 0.9;
// The period is fitted (least squares over bracket midpoints) only over brackets spanning at least this
// many postings and no wider than kPeriodFitMaxWidth of a period; below that the guess stands.
inline constexpr double kPeriodFitMinPeriods = 4;
inline constexpr double kPeriodFitMaxWidth = 0.5;
// The grid must fall inside this fraction of the brackets; else the postings are not regular (no grid).
inline constexpr double kGridAgreement = 0.9;
// Where inside a read (~4 ms on an H100) the driver takes the value is not known: the schedule's brackets
// run from the start of one read to the end of the next, the timeline's from read midpoint to midpoint;
// the fit lets each reach this far beyond its ends.
inline constexpr Nanos kBracketSlack = std::chrono::milliseconds(2);
// A fitted period further than this fraction from the guess is not believed (a stall, not a device).
inline constexpr double kPeriodTolerance = 0.2;

// A posting happened in (earliest, latest]: between the reads before and after a change.
struct PostingBracket {
  Nanos earliest{0};
  Nanos latest{0};
  Nanos width() const { return latest - earliest; }
};

struct PostingGrid {
  Nanos phase{0};        // one posting instant; the others are phase + n * period
  Nanos period{0};       // learnt, or kAssumedPostingPeriod while the brackets span too little
  Nanos uncertainty{0};  // half the width of the instants that all agreeing brackets allow
  bool period_fitted = false;

  Nanos at_or_before(Nanos t) const;  // the latest posting at or before t
  Nanos after(Nanos t) const;         // the first posting after t
};

// Fits the grid to the brackets (any order); `period_guess` numbers the postings. Nullopt with fewer
// than `min_brackets` single-posting brackets, or when the grid explains fewer than kGridAgreement of them.
std::optional<PostingGrid> fit_posting_grid(const std::vector<PostingBracket>& brackets, Nanos period_guess,
                                            std::size_t min_brackets);

// One GPU's posting grid learnt from its reads as they come, over a job of any length, in bounded memory:
// the grid fit_posting_grid would find from every bracket added so far. A long job's trace is accounted a
// stretch at a time (measure/phase_folding.hpp), and a stretch's own reads place the grid elsewhere than the
// whole job's do: after its first seconds the read schedule's only narrow brackets are its relock checks,
// centred on the schedule's own estimate of the postings (counter_schedule.hpp), so they confirm that
// estimate rather than narrow it; only the learning bursts' brackets, spread around the postings, do
// (simulated: a stretch's grid 3.7 ms before the postings, the whole job's 1.7 ms, docs/evidence/
// phase-folding.md). The fit needs few of the brackets: the first and last ones (the period's baseline,
// fit_posting_grid pairs only kFeasibilityBrackets of each end) and those that bound the grid's phase
// most tightly from either side; the learner keeps those and lets the rest go.
class PostingGridLearner {
 public:
  // Brackets (any order); those beginning at or before the latest already added are taken to be already
  // added (overlapping stretches of one trace).
  void add(const std::vector<PostingBracket>& brackets);
  // The grid of every bracket added; nullopt until fit_posting_grid finds one (kept from then on if a
  // later fit fails).
  const std::optional<PostingGrid>& grid() const { return grid_; }
  std::size_t kept() const { return first_.size() + recent_.size() + early_side_.size() + late_side_.size(); }

  // Per group (the first, the most recent, the tightest on each side of the phase).
  static constexpr std::size_t kKeptPerGroup = 32;

 private:
  std::vector<PostingBracket> first_, recent_, early_side_, late_side_;
  std::optional<Nanos> added_until_;
  std::optional<PostingGrid> grid_;
};

}  // namespace wattwise::sampling
