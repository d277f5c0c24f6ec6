#pragma once

// HAZARD ZONE (counter timeline). A counter read held up past a posting may have returned the value from
// before it: its knot then stands a period late (CounterPiece::end_if_read_was_stale). The counter cannot
// tell the two placements apart; the fine trace can, where it covers them and its offset is known well
// enough. On the H100 such knots come in runs (train_sync, --schedule 1: 18 reads in a row began ~1 ms
// before their postings and returned the value from before), each one's earlier placement right after the
// knot before it: no knot of a run can move alone, so a run is placed as a whole.

#include <vector>

#include "sampling/alignment.hpp"
#include "sampling/counter_timeline.hpp"
#include "sampling/power_curve.hpp"

namespace wattwise::sampling {

bool has_ambiguous_knots(const CounterTimeline& counter);

// `counter` with every knot that may stand a period late taken out (its two pieces merged into one): the
// pieces whose ends do not depend on the choice, which the fine trace's offset is fitted to before the
// choice (fitted to the knots as placed, a run of late knots drags the offset towards its lag: train_sync
// at the default schedule -43.5 ms against 0.2 ms from every read).
CounterTimeline without_ambiguous_knots(const CounterTimeline& counter);

// Places every ambiguous knot of `pieces` and clears the marks. Each run of consecutive ambiguous knots
// takes the placements whose pieces the fine trace (at `alignment`'s offset and scale) explains best
// together. The fine trace's offset may be off by `alignment`'s uncertainty (at least a sample): a knot
// whose placement changes within it keeps the one chosen and its uncertainty grows to cover the other;
// so does every knot of a run the fine trace cannot judge (no fine trace, one not covering the run, a
// counter break beside it).
void place_ambiguous_knots(std::vector<CounterPiece>& pieces, const PowerCurve* fine,
                           const Alignment& alignment);

}  // namespace wattwise::sampling
