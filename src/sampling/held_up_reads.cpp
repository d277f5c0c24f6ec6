// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/held_up_reads.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

namespace wattwise::sampling {
namespace {

constexpr double kImpossible = std::numeric_limits<double>::infinity();

// Knots first..last (indices of the pieces they end), each marked, the one after `last` not.
struct Run {
  std::size_t first = 0;
  std::size_t last = 0;
};

std::vector<Run> runs_of(const std::vector<CounterPiece>& pieces) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (!pieces[i].end_if_read_was_stale) continue;
    if (!runs.empty() && runs.back().last + 1 == i) {
      runs.back().last = i;
    } else {
      runs.push_back({i, i});
    }
  }
  return runs;
}

// The placement of one run that the fine trace, shifted by `offset`, explains best: per knot, 0 where it
// was placed, 1 a period earlier. Nullopt where the fine trace cannot judge some piece the run touches.
class RunPlacement {
 public:
  RunPlacement(const std::vector<CounterPiece>& pieces, const Run& run, const PowerCurve& fine, double scale)
      : pieces_(pieces), run_(run), fine_(fine), scale_(scale) {}

  std::optional<std::vector<int>> best(Nanos offset) const {
    const std::size_t knots = run_.last - run_.first + 1;
    const bool after = run_.last + 1 < pieces_.size();  // the piece after the run's last knot
    // Forward over the pieces the run's knots end: cost[k][s] is the least misfit of the pieces up to knot
    // k with knot k placed as s, from[k][s] the placement of knot k - 1 it came from.
    std::vector<std::array<double, 2>> cost(knots);
    std::vector<std::array<int, 2>> from(knots, {0, 0});
    for (std::size_t k = 0; k < knots; ++k) {
      const CounterPiece& piece = pieces_[run_.first + k];
      for (int s : {0, 1}) {
        cost[k][s] = kImpossible;
        for (int r : {0, 1}) {
          if (k == 0 && r == 1) break;  // the run's first piece begins at a fixed knot
          const Nanos begin = k == 0 ? piece.begin : knot(k - 1, r);
          const std::optional<double> m = misfit(piece, begin, knot(k, s), offset);
          if (!m) return std::nullopt;
          const double total = (k == 0 ? 0 : cost[k - 1][r]) + *m;
          if (total < cost[k][s]) {
            cost[k][s] = total;
            from[k][s] = r;
          }
        }
      }
    }
    std::array<double, 2> total = cost[knots - 1];
    if (after) {
      const CounterPiece& next = pieces_[run_.last + 1];
      for (int s : {0, 1}) {
        const std::optional<double> m = misfit(next, knot(knots - 1, s), next.end, offset);
        if (!m) return std::nullopt;
        total[s] += *m;
      }
    }
    // Ties (and a fine trace that explains neither) keep the knot where it was placed.
    int s = total[1] < total[0] ? 1 : 0;
    std::vector<int> placement(knots);
    for (std::size_t k = knots; k-- > 0;) {
      placement[k] = s;
      s = from[k][s];
    }
    return placement;
  }

  Nanos knot(std::size_t k, int s) const {
    const CounterPiece& piece = pieces_[run_.first + k];
    return s == 0 ? piece.end : *piece.end_if_read_was_stale;
  }

 private:
  // How far the piece's increment over [begin, end] is from the fine trace's integral at the overall scale
  // (0: as every other piece); infinite for a piece that would be empty; nullopt where the fine trace
  // cannot tell (an unknown increment, the fine trace not covering the piece or silent over it).
  std::optional<double> misfit(const CounterPiece& piece, Nanos begin, Nanos end, Nanos offset) const {
    if (end <= begin) return kImpossible;
    if (!piece.energy_j || *piece.energy_j <= 0 || scale_ <= 0) return std::nullopt;
    if (!fine_.covers(begin + offset, end + offset, Nanos{0})) return std::nullopt;
    const double fine_j = fine_.integral_j(begin + offset, end + offset);
    if (fine_j <= 0) return std::nullopt;
    return std::abs(std::log(*piece.energy_j / (scale_ * fine_j)));
  }

  const std::vector<CounterPiece>& pieces_;
  Run run_;
  const PowerCurve& fine_;
  double scale_;
};

}  // namespace

bool has_ambiguous_knots(const CounterTimeline& counter) {
  return std::any_of(counter.pieces.begin(), counter.pieces.end(),
                     [](const CounterPiece& piece) { return piece.end_if_read_was_stale.has_value(); });
}

CounterTimeline without_ambiguous_knots(const CounterTimeline& counter) {
  CounterTimeline merged = without_knots(
      counter, [](const CounterPiece& piece) { return piece.end_if_read_was_stale.has_value(); });
  // A last piece still ambiguous (no piece after it to join) has nothing left to choose between.
  for (CounterPiece& piece : merged.pieces) piece.end_if_read_was_stale.reset();
  return merged;
}

void place_ambiguous_knots(std::vector<CounterPiece>& pieces, const PowerCurve* fine,
                           const Alignment& alignment) {
  const Nanos reach = std::max(kOffsetUncertainty, alignment.offset_uncertainty);
  for (const Run& run : runs_of(pieces)) {
    std::optional<std::vector<int>> chosen, early, late;
    if (fine != nullptr && fine->usable()) {
      const RunPlacement placement(pieces, run, *fine, alignment.scale);
      chosen = placement.best(alignment.offset);
      early = placement.best(alignment.offset - reach);
      late = placement.best(alignment.offset + reach);
    }
    for (std::size_t i = run.first; i <= run.last; ++i) {
      const std::size_t k = i - run.first;
      const Nanos earlier = *std::exchange(pieces[i].end_if_read_was_stale, std::nullopt);
      const Nanos placed = pieces[i].end;
      const bool clear = chosen && early && late && (*early)[k] == (*chosen)[k] && (*late)[k] == (*chosen)[k];
      if (!clear) pieces[i].end_uncertainty = std::max(pieces[i].end_uncertainty, placed - earlier);
      if (!chosen || (*chosen)[k] == 0) continue;
      pieces[i].end = earlier;
      if (i + 1 < pieces.size()) pieces[i + 1].begin = earlier;
    }
  }
}

}  // namespace wattwise::sampling
