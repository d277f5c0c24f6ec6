#include "sampling/energy_accounting.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace wattwise::sampling {
namespace {

// A per-interval scale this far from the overall one means the fine trace saw (almost) nothing of what
// the counter saw there (a gap, a glitch): spread the counter's increment evenly instead of amplifying noise.
constexpr double kMaxScaleDeviation = 4.0;

double ratio(Nanos part, Nanos whole) {
  return static_cast<double>(part.count()) / static_cast<double>(whole.count());
}

}  // namespace

EnergyAccounting::EnergyAccounting(const GpuTrace& trace)
    : counter_(build_counter_timeline(trace.energy)),
      samples_(trace.power_samples, PowerInterpolation::kIntervalMean),
      instant_(trace.power_instant, PowerInterpolation::kTrapezoid),
      average_(trace.power_average, PowerInterpolation::kTrapezoid) {
  if (counter_.pieces.empty()) return;
  const Nanos span_begin = counter_.pieces.front().begin;
  const Nanos span_end = counter_.pieces.back().end;
  if (samples_.covers(span_begin, span_end, kCoverageTolerance)) {
    fine_ = &samples_;
    reconciled_method_ = EnergyMethod::kSamplesReconciled;
  } else if (instant_.covers(span_begin, span_end, kCoverageTolerance)) {
    fine_ = &instant_;
    reconciled_method_ = EnergyMethod::kInstantReconciled;
  } else {
    reconciled_method_ = EnergyMethod::kCounter;
  }
  if (fine_ != nullptr) alignment_ = estimate_alignment(counter_, *fine_);
  build_pieces();
  // Only the span and whether there was a break are needed from here on; the pieces live on in pieces_.
  counter_.pieces = {};
}

double EnergyAccounting::unknown_piece_energy(std::size_t index, double fine_j) const {
  if (fine_ != nullptr) return std::max(0.0, alignment_.scale * fine_j);
  // No fine trace: assume the power of the nearest interval the counter did measure.
  const std::vector<CounterPiece>& pieces = counter_.pieces;
  for (std::size_t distance = 1; distance < pieces.size(); ++distance) {
    for (std::size_t j : {index - distance, index + distance}) {
      if (j >= pieces.size() || !pieces[j].energy_j) continue;  // index - distance wraps to a huge value
      return *pieces[j].energy_j *
             ratio(pieces[index].end - pieces[index].begin, pieces[j].end - pieces[j].begin);
    }
  }
  return 0;
}

void EnergyAccounting::build_pieces() {
  const Nanos offset = alignment_.offset;
  double cumulative_j = 0;
  std::size_t cursor = 0;
  // One piece per counter update: millions on a long (simulated) job, so no doubling slack.
  pieces_.reserve(counter_.pieces.size());
  piece_begins_.reserve(counter_.pieces.size());
  for (std::size_t i = 0; i < counter_.pieces.size(); ++i) {
    const CounterPiece& source = counter_.pieces[i];
    Piece piece{source.begin, source.end, cumulative_j, 0, std::nullopt, 0, 0};
    double fine_j = 0;
    if (fine_ != nullptr) {
      piece.fine_at_begin_j = fine_->cumulative_j(source.begin + offset, cursor);
      piece.fine_cursor = cursor;
      fine_j = fine_->cumulative_j(source.end + offset, cursor) - piece.fine_at_begin_j;
    }
    piece.energy_j = source.energy_j ? *source.energy_j : unknown_piece_energy(i, fine_j);
    if (fine_ != nullptr && fine_j > 0) {
      const double scale = piece.energy_j / fine_j;
      const double deviation = scale / alignment_.scale;
      if (deviation < kMaxScaleDeviation && deviation > 1 / kMaxScaleDeviation) piece.scale = scale;
    }
    cumulative_j += piece.energy_j;
    pieces_.push_back(piece);
    piece_begins_.push_back(piece.begin);
  }
  total_j_ = cumulative_j;
}

std::size_t EnergyAccounting::first_piece_after(Nanos t) const {
  // upper_bound, started where t would fall if the pieces were evenly spaced (they nearly are: one per
  // counter update), then galloping outwards: a few probes near t instead of a binary search whose first
  // probes miss the cache on a long trace.
  const auto begins = piece_begins_.begin();
  const std::size_t n = piece_begins_.size();
  if (n == 0 || t < piece_begins_.front()) return 0;
  const Nanos span = piece_begins_.back() - piece_begins_.front();
  const double fraction = span.count() > 0 ? std::min(1.0, ratio(t - piece_begins_.front(), span)) : 1.0;
  std::size_t lo = std::min(n - 1, static_cast<std::size_t>(fraction * static_cast<double>(n - 1)));
  std::size_t hi = lo + 1;  // invariant sought: begins[lo] <= t < begins[hi] (hi == n: past the end)
  for (std::size_t stride = 1; piece_begins_[lo] > t; stride *= 2) {
    hi = lo;
    lo = lo > stride ? lo - stride : 0;
  }
  for (std::size_t stride = 1; hi < n && piece_begins_[hi] <= t; stride *= 2) {
    lo = hi;
    hi = std::min(n, hi + stride);
  }
  const auto first = begins + static_cast<std::ptrdiff_t>(lo);
  return static_cast<std::size_t>(std::upper_bound(first, begins + static_cast<std::ptrdiff_t>(hi), t) -
                                  begins);
}

double EnergyAccounting::reconciled_cumulative_j(Nanos t, bool use_fine) const {
  // The piece that starts last at or before t; before the first piece, the first (extrapolated).
  const std::size_t after = first_piece_after(t);
  const std::size_t index = after == 0 ? 0 : after - 1;
  const Piece& piece = pieces_[index];
  if (use_fine && piece.scale) {
    // From the piece's own place in the fine trace a short gallop finds t, instead of a binary search
    // over the whole trace (t before the first piece: the cursor would be ahead of it).
    std::size_t cursor = piece.fine_cursor;
    const double fine_j = t >= piece.begin ? fine_->cumulative_j(t + alignment_.offset, cursor)
                                           : fine_->cumulative_j(t + alignment_.offset);
    return piece.start_j + *piece.scale * (fine_j - piece.fine_at_begin_j);
  }
  return piece.start_j + piece.energy_j * ratio(t - piece.begin, piece.end - piece.begin);
}

WindowEnergy EnergyAccounting::energy(Nanos t0, Nanos t1) const {
  if (t1 < t0) throw usage_error("energy window ends before it starts: pass the earlier time first");
  if (!pieces_.empty()) {
    if (t0 <= counter_.first_read && t1 >= counter_.last_read) return total();
    if (t0 >= counter_.first_read - kCoverageTolerance && t1 <= counter_.last_read + kCoverageTolerance) {
      const Nanos offset = alignment_.offset;
      const bool use_fine = fine_ != nullptr && fine_->covers(t0 + offset, t1 + offset, kCoverageTolerance);
      const double joules = reconciled_cumulative_j(t1, use_fine) - reconciled_cumulative_j(t0, use_fine);
      return WindowEnergy{std::max(0.0, joules), use_fine ? reconciled_method_ : EnergyMethod::kCounter};
    }
  }
  return unreconciled(t0, t1);
}

WindowEnergy EnergyAccounting::total() const {
  if (pieces_.empty()) {
    if (samples_.usable()) return unreconciled(samples_.first(), samples_.last());
    if (instant_.usable()) return unreconciled(instant_.first(), instant_.last());
    if (average_.usable()) return unreconciled(average_.first(), average_.last());
    return WindowEnergy{};
  }
  const EnergyMethod method =
      counter_.has_break && fine_ != nullptr ? reconciled_method_ : EnergyMethod::kCounter;
  return WindowEnergy{total_j_, method};
}

WindowEnergy EnergyAccounting::unreconciled(Nanos t0, Nanos t1) const {
  if (samples_.covers(t0, t1, kCoverageTolerance))
    return WindowEnergy{samples_.integral_j(t0, t1), EnergyMethod::kSamples};
  if (instant_.covers(t0, t1, kCoverageTolerance)) {
    return WindowEnergy{instant_.integral_j(t0, t1), EnergyMethod::kInstantPower};
  }
  if (average_.covers(t0, t1, kCoverageTolerance)) {
    return WindowEnergy{average_.integral_j(t0, t1), EnergyMethod::kAveragePower};
  }
  return WindowEnergy{};
}

std::optional<Alignment> EnergyAccounting::alignment() const {
  if (fine_ == nullptr) return std::nullopt;
  return alignment_;
}

WindowEnergy window_energy(const GpuTrace& trace, Nanos t0, Nanos t1) {
  return EnergyAccounting(trace).energy(t0, t1);
}

}  // namespace wattwise::sampling
