#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/posting_grid.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

// The energy counter seen as what it is: a value the device posts every ~100 ms. Two reads between which
// the value changed bracket the posting(s) in between; a "knot" is the instant the later value was posted.
// Between consecutive knots the counter's increment is exactly the energy spent. The reads may be dense
// (every bracket holds one posting) or sparse (the schedule reads only every k-th posting, with short
// dense bursts now and then): the narrow brackets fix the posting grid (posting_grid.hpp, its period
// learnt per GPU, 100 ms only the starting guess), and every knot goes to the latest grid instant inside
// its bracket. Without a grid (irregular postings) a knot is its bracket's midpoint (each read's own
// midpoint, as the value comes from somewhere inside the ~3 ms call).
struct CounterPiece {
  Nanos begin{0};
  Nanos end{0};
  // The counter's increment over [begin, end]; absent when the counter went down (reset or wrap) there:
  // a new segment starts and the energy across the break is unknown to the counter.
  std::optional<double> energy_j;
  // How far `end` (the knot) may be from the posting it stands for: the grid's uncertainty when it was
  // snapped to the grid, else half its bracket (a narrow one) or half a period (a wide one, placed half a
  // period before its later read).
  Nanos end_uncertainty{0};
  // The grid instant one period before `end`, where `end` lies inside the later read's own call: that read
  // was held up past the posting (a busy node preempts the driver) and may have returned the value from
  // before it, in which case the increment ends here, a whole period earlier. The instant need only follow
  // the start of the read before (not its midpoint): held up too, that one may have taken its value then. The counter cannot tell the
  // two apart; the fine trace can (held_up_reads.hpp places it, or widens its uncertainty).
  std::optional<Nanos> end_if_read_was_stale;
};

// A knot whose read's call spans more than this many postings is as uncertain as the call (a sliver of a core
// held an H100's reads for 1.7-7.9 s: docs/evidence/pinned-h100.md): a "loose" knot, which the accounting
// neither fits the samples' offset to nor anchors a window's edge on (energy_accounting_edges.cpp).
inline constexpr std::int64_t kLooseKnotPostings = 3;

struct CounterTimeline {
  std::vector<CounterPiece> pieces;  // contiguous and in time order; empty if the value never changed
  Nanos first_read{0};
  Nanos last_read{0};
  double known_energy_j = 0;  // sum of the known increments: last minus first value, across segments
  bool has_break = false;     // some piece has an unknown increment
  Nanos update_period{0};     // the fitted posting period, else the median time between knots
  bool has_grid = false;      // the knots were placed on a fitted posting grid
  // When the reads had first bracketed enough single postings to know the grid (the later read of the
  // kMinGridBrackets-th narrow bracket); nullopt without a grid. A grid known only after a job ended means
  // the sampler could not read densely while the job ran (a starved CPU).
  std::optional<Nanos> grid_known_at;
};

// The first piece starts one update period before the first knot: the first read's value was posted
// then, so the counter's total (last minus first value) is exactly the sum of the pieces.
// With `known_grid` the knots go to that grid (learnt over a longer stretch of the same GPU's reads,
// PostingGridLearner) instead of one fitted to these reads.
CounterTimeline build_counter_timeline(const std::vector<CounterReading>& readings,
                                       const std::optional<PostingGrid>& known_grid = std::nullopt);
// Whether a piece ends at a loose knot (kLooseKnotPostings), whether any does, and `counter` with every loose
// knot taken out, its two pieces merged into one: what the accounting fits the samples' offset and scale to
// (placed seconds from its posting, a loose knot's pieces mislead the scale: 1.0775 for samples exact to the
// J in the held-up test, HeldUpRead.AnEdgeBesideAKnotHeldUpAcrossManyPostings...).
bool ends_at_loose_knot(const CounterPiece& piece, Nanos update_period);
// `counter` with the knot at the end of every piece `drop_end` names taken out: that piece and the next merge
// into one (energies summed; the next's end, its uncertainty and its stale-read alternative kept).
CounterTimeline without_knots(const CounterTimeline& counter,
                              const std::function<bool(const CounterPiece&)>& drop_end);
bool has_loose_knots(const CounterTimeline& counter);
CounterTimeline without_loose_knots(const CounterTimeline& counter);

// The brackets the timeline fits its grid to: for each change of the value, from the midpoint of the read
// before to that of the read after (the wide ones included; the fit leaves them out).
std::vector<PostingBracket> posting_brackets(const std::vector<CounterReading>& readings);

}  // namespace wattwise::sampling
