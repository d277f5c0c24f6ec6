#include "sampling/alignment.hpp"

#include <cmath>
#include <vector>

namespace wattwise::sampling {
namespace {

constexpr Nanos kCoarseStep = std::chrono::milliseconds(5);
constexpr Nanos kFineStep = std::chrono::microseconds(250);

struct Fit {
  double residual_sq = 0;  // sum of squared differences at the best common scale
  double scale = 1;
  double counter_sq = 0;  // sum of squared counter increments, the yardstick for ties
};

// The pieces the fit uses: a known increment and inside the fine trace.
std::vector<const CounterPiece*> usable_pieces(const CounterTimeline& counter, const PowerCurve& fine) {
  std::vector<const CounterPiece*> pieces;
  for (const CounterPiece& piece : counter.pieces) {
    if (piece.energy_j && fine.covers(piece.begin, piece.end, Nanos{0})) pieces.push_back(&piece);
  }
  return pieces;
}

Fit fit_at(const std::vector<const CounterPiece*>& pieces, const PowerCurve& fine, Nanos shift) {
  double ee = 0, es = 0, ss = 0;
  std::size_t cursor = 0;
  for (const CounterPiece* piece : pieces) {
    const double s_begin = fine.cumulative_j(piece->begin + shift, cursor);
    const double s_end = fine.cumulative_j(piece->end + shift, cursor);
    const double de = *piece->energy_j;
    const double ds = s_end - s_begin;
    ee += de * de;
    es += de * ds;
    ss += ds * ds;
  }
  if (ss <= 0) return Fit{ee, 1, ee};
  return Fit{std::max(0.0, ee - es * es / ss), es / ss, ee};
}

struct Best {
  Nanos shift{0};
  Fit fit;
  bool found = false;
};

void consider(Best& best, Nanos shift, const Fit& fit) {
  constexpr double kRelativeTie = 1e-9;
  const double tie = kRelativeTie * std::max(1.0, fit.counter_sq);
  const bool better = !best.found || fit.residual_sq < best.fit.residual_sq - tie ||
                      (std::abs(fit.residual_sq - best.fit.residual_sq) <= tie &&
                       std::chrono::abs(shift) < std::chrono::abs(best.shift));
  if (better) best = Best{shift, fit, true};
}

}  // namespace

Alignment estimate_alignment(const CounterTimeline& counter, const PowerCurve& fine, Nanos search) {
  Alignment alignment;
  if (!fine.usable()) return alignment;
  const std::vector<const CounterPiece*> pieces = usable_pieces(counter, fine);
  alignment.intervals = pieces.size();
  // Fewer than three intervals cannot separate a shift from a scale.
  if (pieces.size() < 3) return alignment;

  Best best;
  for (Nanos shift = -search; shift <= search; shift += kCoarseStep)
    consider(best, shift, fit_at(pieces, fine, shift));
  const Nanos centre = best.shift;
  for (Nanos shift = centre - kCoarseStep; shift <= centre + kCoarseStep; shift += kFineStep) {
    consider(best, shift, fit_at(pieces, fine, shift));
  }

  alignment.offset = best.shift;
  alignment.scale = best.fit.scale;
  alignment.residual_rms_j = std::sqrt(best.fit.residual_sq / static_cast<double>(pieces.size()));
  double abs_sum = 0, energy_sum = 0;
  std::size_t cursor = 0;
  for (const CounterPiece* piece : pieces) {
    const double s_begin = fine.cumulative_j(piece->begin + best.shift, cursor);
    const double ds = fine.cumulative_j(piece->end + best.shift, cursor) - s_begin;
    abs_sum += std::abs(*piece->energy_j - best.fit.scale * ds);
    energy_sum += *piece->energy_j;
  }
  alignment.residual_relative = energy_sum > 0 ? abs_sum / energy_sum : 0;
  return alignment;
}

}  // namespace wattwise::sampling
