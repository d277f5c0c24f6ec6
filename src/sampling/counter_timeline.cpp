// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/counter_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sampling/posting_grid.hpp"

namespace wattwise::sampling {
namespace {

// Without a grid or two knots there is no measured update period: start from the H100's.
constexpr Nanos kAssumedUpdatePeriod = kAssumedPostingPeriod;
constexpr double kJoulesPerMilli = 1e-3;

Nanos read_midpoint(const CounterReading& r) {
  return r.t - r.read_cost / 2;
}

struct Knot {
  Nanos t;
  std::optional<double> increment_j;
  Nanos earliest{0};  // the posting happened after the previous read ...
  Nanos latest{0};    // ... and before this one
  Nanos uncertainty{0};
  Nanos later_read_begin{0};  // when the read that saw the new value began
  Nanos earlier_read_begin{0};  // when the read before it began: its value may come from then on
  std::optional<Nanos> if_read_was_stale;  // CounterPiece::end_if_read_was_stale
};

Nanos median_gap(const std::vector<Knot>& knots) {
  if (knots.size() < 2) return kAssumedUpdatePeriod;
  std::vector<Nanos> gaps;
  gaps.reserve(knots.size() - 1);
  for (std::size_t i = 1; i < knots.size(); ++i) gaps.push_back(knots[i].t - knots[i - 1].t);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

// Fewer single-posting brackets than this and the grid is not trusted: the midpoints stay. The same two the
// read schedule locks on (counter_schedule.cpp): a learning burst cut short on a busy node may leave only
// those, and the schedule's sparse reads that follow sit just after postings, where the no-grid rule
// (half a period before the later read) would misplace each knot by ~45 ms (seen: 3-5% on a 1 s job).
constexpr std::size_t kMinGridBrackets = 2;
// A grid instant this close outside a knot's bracket still belongs to it (a posting right at a read's edge).
constexpr Nanos kEdgeTolerance = std::chrono::milliseconds(2);

// The device posts the counter on a regular grid (posting_grid.hpp). Every knot moves to the latest grid
// instant inside its bracket: for a narrow bracket (dense reads) the one posting in it, for a wide one (the
// schedule's sparse reads, k postings apart) the last posting before the later read, which is where the
// increment ends. Without a grid (irregular postings, too few narrow brackets) the midpoints stay.
// A grid instant within the grid's own uncertainty after the later read is the posting that read saw (the
// schedule reads a few ms after postings, and a grid from two brackets is known to +-8 ms): the knot is
// clamped to the read, off by at most that uncertainty, instead of a whole period early (seen in CI: a
// constant GPU's phases 15-25% low, pieces of 600 ms holding 500 ms of energy).
// `brackets` are the knots' own (posting_brackets), fitted when no grid is known.
std::optional<PostingGrid> snap_knots_to_update_grid(std::vector<Knot>& knots,
                                                     const std::vector<PostingBracket>& brackets,
                                                     const std::optional<PostingGrid>& known_grid) {
  const std::optional<PostingGrid> grid =
      known_grid ? known_grid : fit_posting_grid(brackets, kAssumedUpdatePeriod, kMinGridBrackets);
  if (!grid) return std::nullopt;
  // From the last knot back: an instant the next knot already holds is not this one's. A read right at a
  // posting may have come just before it; the next, narrower bracket then proves it (seen in CI: a read
  // 0.35 ms after a grid instant, the dense read 13 ms later saw the change; snapping both to that instant
  // made a 400 ms piece of three postings' energy, 12% low over a 0.7 s job).
  std::optional<Nanos> next_instant;
  for (auto knot = knots.rbegin(); knot != knots.rend(); ++knot) {
    Nanos on_grid = grid->at_or_before(knot->latest + grid->uncertainty + kEdgeTolerance);
    while (next_instant && on_grid >= *next_instant) on_grid -= grid->period;
    if (on_grid >= knot->earliest - kEdgeTolerance) {
      knot->t = std::clamp(on_grid, knot->earliest, knot->latest);
      knot->uncertainty = std::min(grid->uncertainty + kEdgeTolerance, knot->latest - knot->earliest);
      next_instant = on_grid;
      // The instant may lie inside the later read's call (within the grid's uncertainty: a learnt grid was
      // 1.5 ms early in the case below) and the bracket also holds the instant before it:
      // the read may have taken the value before that posting (issue 20's load test, repetition 47: a
      // read begun 3 ms before a posting and held up 15 ms put a constant GPU's knot 100 ms late, its
      // 1 s piece 10% low). Only the fine trace can choose (held_up_reads.hpp).
      // The earlier instant need only follow the start of the read before, not its midpoint: held up too,
      // that read may have taken its value at its start (pinned-n10-s4, docs/evidence/pinned-h100.md: reads
      // of 116-311 ms back to back, each value from its call's first ms; bounded by the midpoint, some knots
      // could not take their earlier instant, the offset was fitted to them and the runs of stale knots
      // around them were placed against them: a window edge beside a knot a period late, 8.0 J high with
      // a bar of 5.0 J).
      const Nanos before = on_grid - grid->period;
      if (knot->t + grid->uncertainty + kEdgeTolerance > knot->later_read_begin &&
          before >= knot->earlier_read_begin - kEdgeTolerance)
        knot->if_read_was_stale = before;
      // A call held up across more postings than the two placements above can tell apart (on a sliver of a
      // core an H100's reads took 1.8-7.9 s, 18-80 postings: docs/evidence/pinned-h100.md) may hold the value
      // of any posting from a period before it began: the knot is as uncertain as that.
      const Nanos held_since = knot->later_read_begin - grid->period;
      if (knot->t - held_since > kLooseKnotPostings * grid->period)
        knot->uncertainty = std::max(knot->uncertainty, knot->t - std::max(held_since, knot->earliest));
    } else {
      next_instant = grid->at_or_before(knot->t);
    }
  }
  return grid;
}

// The posting period. With few knots the gaps are quantised by the polling period (at 17 ms polling a 100 ms
// period shows as 85 or 102 ms gaps), so the median can be off by a whole polling period; the mean over the
// span is off by one bracket divided by the number of gaps. With fewer than eight gaps, a mean within 20% of
// the H100's 100 ms is taken to be that 100 ms.
Nanos update_period_of(const std::vector<Knot>& knots) {
  if (knots.size() < 2) return kAssumedUpdatePeriod;
  const auto gaps = static_cast<std::int64_t>(knots.size() - 1);
  const Nanos mean = (knots.back().t - knots.front().t) / gaps;
  const bool near_assumed = mean > kAssumedUpdatePeriod * 4 / 5 && mean < kAssumedUpdatePeriod * 6 / 5;
  if (gaps < 8 && near_assumed) return kAssumedUpdatePeriod;
  return median_gap(knots) > Nanos{0} && !near_assumed ? median_gap(knots) : mean;
}

}  // namespace

bool ends_at_loose_knot(const CounterPiece& piece, Nanos update_period) {
  return piece.end_uncertainty > kLooseKnotPostings * update_period;
}

bool has_loose_knots(const CounterTimeline& counter) {
  return std::any_of(counter.pieces.begin(), counter.pieces.end(), [&](const CounterPiece& piece) {
    return ends_at_loose_knot(piece, counter.update_period);
  });
}

CounterTimeline without_knots(const CounterTimeline& counter,
                              const std::function<bool(const CounterPiece&)>& drop_end) {
  CounterTimeline merged = counter;
  merged.pieces.clear();
  bool joining = false;  // the last piece kept ends at a knot taken out: this one joins it
  for (const CounterPiece& piece : counter.pieces) {
    if (joining) {
      CounterPiece& last = merged.pieces.back();
      last.end = piece.end;
      last.energy_j =
          last.energy_j && piece.energy_j ? std::optional(*last.energy_j + *piece.energy_j) : std::nullopt;
      last.end_uncertainty = piece.end_uncertainty;
      last.end_if_read_was_stale = piece.end_if_read_was_stale;
    } else {
      merged.pieces.push_back(piece);
    }
    joining = drop_end(piece);
  }
  return merged;
}

CounterTimeline without_loose_knots(const CounterTimeline& counter) {
  return without_knots(counter,
                       [&](const CounterPiece& piece) { return ends_at_loose_knot(piece, counter.update_period); });
}

std::vector<PostingBracket> posting_brackets(const std::vector<CounterReading>& readings) {
  std::size_t changes = 0;  // millions on a long job: reserve exactly rather than grow by doubling
  for (std::size_t i = 1; i < readings.size(); ++i)
    changes += readings[i].energy_mj != readings[i - 1].energy_mj;
  std::vector<PostingBracket> brackets;
  brackets.reserve(changes);
  for (std::size_t i = 1; i < readings.size(); ++i)
    if (readings[i].energy_mj != readings[i - 1].energy_mj)
      brackets.push_back({read_midpoint(readings[i - 1]), read_midpoint(readings[i])});
  return brackets;
}

CounterTimeline build_counter_timeline(const std::vector<CounterReading>& readings,
                                       const std::optional<PostingGrid>& known_grid) {
  CounterTimeline timeline;
  if (readings.empty()) return timeline;
  timeline.first_read = readings.front().t;
  timeline.last_read = readings.back().t;

  std::vector<Knot> knots;
  std::optional<PostingGrid> grid;
  {
    // A knot per change of the value, in its posting bracket, at the bracket's middle until a grid moves it.
    const std::vector<PostingBracket> brackets = posting_brackets(readings);
    knots.reserve(brackets.size());
    auto bracket = brackets.begin();
    for (std::size_t i = 1; i < readings.size(); ++i) {
      const CounterReading& before = readings[i - 1];
      const CounterReading& after = readings[i];
      if (after.energy_mj == before.energy_mj) continue;
      std::optional<double> increment_j;
      if (after.energy_mj > before.energy_mj) {
        increment_j = static_cast<double>(after.energy_mj - before.energy_mj) * kJoulesPerMilli;
      }
      const auto [earliest, latest] = *bracket++;
      const Nanos half_width = (latest - earliest) / 2;
      knots.push_back(Knot{earliest + half_width, increment_j, earliest, latest, half_width,
                           after.t - after.read_cost, before.t - before.read_cost, {}});
    }
    if (knots.empty()) return timeline;
    grid = snap_knots_to_update_grid(knots, brackets, known_grid);
  }
  if (!grid) {
    // No grid: a bracket wider than a posting period (sparse reads) ends half an assumed period after
    // its last posting on average, not at its midpoint, which may be hundreds of ms off.
    for (Knot& knot : knots) {
      if (knot.latest - knot.earliest > kAssumedUpdatePeriod) {
        knot.t = knot.latest - kAssumedUpdatePeriod / 2;
        knot.uncertainty = kAssumedUpdatePeriod / 2;
      }
    }
  } else {
    timeline.has_grid = true;
    std::size_t narrow = 0;
    for (const Knot& knot : knots) {
      const auto width = static_cast<double>((knot.latest - knot.earliest).count());
      if (width >= kSinglePostingWidth * static_cast<double>(grid->period.count())) continue;
      if (++narrow == kMinGridBrackets) {
        timeline.grid_known_at = knot.latest;
        break;
      }
    }
  }
  timeline.update_period = grid ? grid->period : std::min(update_period_of(knots), kAssumedUpdatePeriod);
  // The first read's value was posted at the last posting before it. A grid instant within the grid's
  // uncertainty after that read is taken to be before it: had it come after, the next read would have
  // seen it change and the first knot would be there, a period earlier (a first piece of two periods with
  // one posting's energy halved the power of a 1 s job's first 100 ms).
  const Nanos first_read_mid = read_midpoint(readings.front());
  Nanos begin = grid ? grid->at_or_before(first_read_mid + grid->uncertainty + kEdgeTolerance)
                     : knots.front().t - timeline.update_period;
  if (begin >= knots.front().t) begin = knots.front().t - timeline.update_period;
  timeline.pieces.reserve(knots.size());
  bool previous_ambiguous = false;
  for (const Knot& knot : knots) {
    std::optional<Nanos> if_stale = knot.if_read_was_stale;
    // The piece would vanish: the posting is the knot before's, which stands where it is. Where that knot
    // may stand a period earlier too, this one may follow it (a run of stale reads, held_up_reads.hpp).
    if (if_stale && *if_stale <= begin && !previous_ambiguous) if_stale.reset();
    previous_ambiguous = if_stale.has_value();
    timeline.pieces.push_back(CounterPiece{begin, knot.t, knot.increment_j, knot.uncertainty, if_stale});
    if (knot.increment_j) {
      timeline.known_energy_j += *knot.increment_j;
    } else {
      timeline.has_break = true;
    }
    begin = knot.t;
  }
  return timeline;
}

}  // namespace wattwise::sampling
