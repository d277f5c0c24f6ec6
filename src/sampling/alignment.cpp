#include "sampling/alignment.hpp"

#include <algorithm>
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

// A grid of candidate shifts: first, first + step, ... (count of them).
struct ShiftGrid {
  Nanos first{0};
  Nanos step{0};
  std::size_t count = 0;

  Nanos at(std::size_t i) const { return first + step * static_cast<std::int64_t>(i); }
};

// The least-squares sums of every shift of the grid, added to over the pieces in one pass: at each piece
// boundary the fine trace's cumulative energy is evaluated for all shifts together (neighbouring shifts
// land in the same or the next reading interval, so this is a short walk), and a boundary shared by two
// contiguous pieces is evaluated once. Each shift's sums run over the pieces in order, exactly as one shift
// at a time would. es[i] = sum dE * dS_i, ss[i] = sum dS_i^2, ee = sum dE^2.
void add_grid_sums(const std::vector<const CounterPiece*>& pieces, const PowerCurve& fine, const ShiftGrid& grid,
                   std::vector<double>& es, std::vector<double>& ss, double& ee) {
  std::vector<double> at_begin(grid.count), at_end(grid.count);
  std::size_t cursor = 0;
  bool have_end = false;
  Nanos previous_end{0};
  for (const CounterPiece* piece : pieces) {
    if (have_end && piece->begin == previous_end) {
      std::swap(at_begin, at_end);
    } else {
      fine.cumulative_j_grid(piece->begin + grid.first, grid.step, at_begin, cursor);
    }
    fine.cumulative_j_grid(piece->end + grid.first, grid.step, at_end, cursor);
    have_end = true;
    previous_end = piece->end;
    const double de = *piece->energy_j;
    ee += de * de;
    for (std::size_t i = 0; i < grid.count; ++i) {
      const double ds = at_end[i] - at_begin[i];
      es[i] += de * ds;
      ss[i] += ds * ds;
    }
  }
}

// The fit at the best common scale c = es / ss: the residual sum of squares ee - es^2 / ss.
Fit fit_from_sums(double ee, double es, double ss) {
  return ss <= 0 ? Fit{ee, 1, ee} : Fit{std::max(0.0, ee - es * es / ss), es / ss, ee};
}

// The fit at every shift of the grid.
std::vector<Fit> fits_on_grid(const std::vector<const CounterPiece*>& pieces, const PowerCurve& fine,
                              const ShiftGrid& grid) {
  std::vector<double> es(grid.count, 0.0), ss(grid.count, 0.0);
  double ee = 0;
  add_grid_sums(pieces, fine, grid, es, ss, ee);
  std::vector<Fit> fits(grid.count);
  for (std::size_t i = 0; i < grid.count; ++i) fits[i] = fit_from_sums(ee, es[i], ss[i]);
  return fits;
}

struct Best {
  Nanos shift{0};
  Fit fit;
  bool found = false;
};

// Fits this close (relative to the counter's sum of squares) are a tie.
constexpr double kRelativeTie = 1e-9;

void consider(Best& best, Nanos shift, const Fit& fit) {
  const double tie = kRelativeTie * std::max(1.0, fit.counter_sq);
  const bool better = !best.found || fit.residual_sq < best.fit.residual_sq - tie ||
                      (std::abs(fit.residual_sq - best.fit.residual_sq) <= tie &&
                       std::chrono::abs(shift) < std::chrono::abs(best.shift));
  if (better) best = Best{shift, fit, true};
}

Alignment finish_alignment(Alignment alignment, const std::vector<const CounterPiece*>& pieces,
                           const PowerCurve& fine, const Best& best);

}  // namespace

Alignment estimate_alignment(const CounterTimeline& counter, const PowerCurve& fine, Nanos search) {
  Alignment alignment;
  if (!fine.usable()) return alignment;
  const std::vector<const CounterPiece*> pieces = usable_pieces(counter, fine);
  alignment.intervals = pieces.size();
  // Fewer than three intervals cannot separate a shift from a scale.
  if (pieces.size() < 3) return alignment;

  Best best;
  const auto coarse_count = search >= Nanos{0} ? static_cast<std::size_t>(2 * search / kCoarseStep) + 1 : 0;
  const ShiftGrid coarse{-search, kCoarseStep, coarse_count};
  const std::vector<Fit> coarse_fits = fits_on_grid(pieces, fine, coarse);
  for (std::size_t i = 0; i < coarse.count; ++i) consider(best, coarse.at(i), coarse_fits[i]);
  const ShiftGrid refine{best.shift - kCoarseStep, kFineStep,
                         static_cast<std::size_t>(2 * kCoarseStep / kFineStep) + 1};
  const std::vector<Fit> fine_fits = fits_on_grid(pieces, fine, refine);
  for (std::size_t i = 0; i < refine.count; ++i) consider(best, refine.at(i), fine_fits[i]);

  alignment = finish_alignment(alignment, pieces, fine, best);
  // The shifts the data cannot tell from the best: a residual within four mean squares of one interval's
  // (two standard deviations of a chi-squared change for one parameter), or within the tie.
  const double noise = best.fit.residual_sq / static_cast<double>(pieces.size() - 2);
  const double indistinct = 4 * noise + kRelativeTie * std::max(1.0, best.fit.counter_sq);
  const auto widen = [&](const ShiftGrid& grid, const std::vector<Fit>& fits) {
    for (std::size_t i = 0; i < grid.count; ++i)
      if (fits[i].residual_sq <= best.fit.residual_sq + indistinct)
        alignment.offset_uncertainty = std::max(alignment.offset_uncertainty, std::chrono::abs(grid.at(i) - best.shift));
  };
  widen(coarse, coarse_fits);
  widen(refine, fine_fits);
  return alignment;
}

AlignmentSums::AlignmentSums(Nanos first, Nanos step, std::size_t count)
    : first_(first), step_(step), es_(count, 0.0), ss_(count, 0.0) {}

Nanos AlignmentSums::add(const CounterTimeline& counter, const PowerCurve& fine, Nanos from) {
  if (!fine.usable()) return from;
  std::vector<const CounterPiece*> pieces;
  for (const CounterPiece* piece : usable_pieces(counter, fine))
    if (piece->begin >= from) pieces.push_back(piece);
  if (pieces.empty()) return from;
  // fits_on_grid's sums, kept before they become fits: the residual at the best scale needs the totals.
  add_grid_sums(pieces, fine, ShiftGrid{first_, step_, es_.size()}, es_, ss_, ee_);
  intervals_ += pieces.size();
  return pieces.back()->end;
}

std::optional<Nanos> AlignmentSums::best() const {
  if (intervals_ < 3) return std::nullopt;
  Best best;
  for (std::size_t i = 0; i < es_.size(); ++i)
    consider(best, first_ + step_ * static_cast<std::int64_t>(i), fit_from_sums(ee_, es_[i], ss_[i]));
  return best.shift;
}

Alignment alignment_at(const CounterTimeline& counter, const PowerCurve& fine, Nanos shift) {
  Alignment alignment;
  if (!fine.usable()) return alignment;
  const std::vector<const CounterPiece*> pieces = usable_pieces(counter, fine);
  alignment.intervals = pieces.size();
  if (pieces.empty()) return alignment;
  const std::vector<Fit> fits = fits_on_grid(pieces, fine, ShiftGrid{shift, kFineStep, 1});
  return finish_alignment(alignment, pieces, fine, Best{shift, fits.front(), true});
}

namespace {

Alignment finish_alignment(Alignment alignment, const std::vector<const CounterPiece*>& pieces,
                           const PowerCurve& fine, const Best& best) {
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

}  // namespace

}  // namespace wattwise::sampling
