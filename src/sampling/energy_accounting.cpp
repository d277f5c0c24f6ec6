// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/energy_accounting.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "sampling/held_up_reads.hpp"

namespace wattwise::sampling {
namespace {

// A per-interval scale this far from the overall one means the fine trace saw (almost) nothing of what
// the counter saw there (a gap, a glitch): spread the counter's increment evenly instead of amplifying noise.
constexpr double kMaxScaleDeviation = 4.0;

double ratio(Nanos part, Nanos whole) {
  return static_cast<double>(part.count()) / static_cast<double>(whole.count());
}

// Where the accounting only knows a mean power, the most the load is taken to draw about it: three times
// the mean (a load swinging between two levels, on a third of the time, the lower near zero). A heuristic;
// its coverage is measured (docs/evidence/energy-checks.md).
constexpr double kPeakToMean = 3.0;

// Average power of `joules` over `span` (0 for an empty span).
double power_w(double joules, Nanos span) {
  return span > Nanos{0} ? joules / to_seconds(span) : 0.0;
}

}  // namespace

EnergyAccounting::EnergyAccounting(const GpuTrace& trace) : EnergyAccounting(trace, std::nullopt) {}

EnergyAccounting::EnergyAccounting(const GpuTrace& trace, std::optional<Nanos> known_offset,
                                   const std::optional<PostingGrid>& known_grid)
    : counter_(build_counter_timeline(trace.energy, known_grid)),
      samples_(trace.power_samples, PowerInterpolation::kIntervalMean),
      instant_(trace.power_instant, PowerInterpolation::kTrapezoid),
      average_(trace.power_average, PowerInterpolation::kTrapezoid),
      sample_gaps_(disjoint_sample_gaps(trace.sample_gaps)) {
  gaps_cumulative_j_.reserve(sample_gaps_.size() + 1);
  gaps_cumulative_j_.push_back(0);
  for (const SampleGap& gap : sample_gaps_)
    gaps_cumulative_j_.push_back(gaps_cumulative_j_.back() + samples_.integral_j(gap.after, gap.before));
  const std::vector<CounterReading>& reads = trace.energy;
  read_times_.reserve(reads.size());
  read_cumulative_j_.reserve(reads.size());
  double cumulative_j = 0;
  for (std::size_t i = 0; i < reads.size(); ++i) {
    // A counter that went down (reset, wrap): the increase across it is unknown and counted as none.
    if (i > 0 && reads[i].energy_mj > reads[i - 1].energy_mj)
      cumulative_j += static_cast<double>(reads[i].energy_mj - reads[i - 1].energy_mj) * 1e-3;
    if (!read_times_.empty() && reads[i].t < read_times_.back()) continue;  // out of order: not a bracket
    read_times_.push_back(reads[i].t);
    read_cumulative_j_.push_back(cumulative_j);
    read_costs_.push_back(std::max(Nanos{0}, reads[i].read_cost));
    read_starts_.push_back(reads[i].t - read_costs_.back());
  }
  for (std::size_t i = read_starts_.size(); i-- > 1;)
    read_starts_[i - 1] = std::min(read_starts_[i - 1], read_starts_[i]);
  for (const auto* readings : {&trace.power_samples, &trace.power_instant})
    for (const PowerReading& reading : *readings) peak_power_w_ = std::max(peak_power_w_, reading.power_w);
  peak_power_w_ = std::max(peak_power_w_, trace.coarsened_peak_w.value_or(0.0));
  has_grid_ = counter_.has_grid;
  grid_known_at_ = counter_.grid_known_at;
  if (counter_.update_period > Nanos{0}) posting_period_ = counter_.update_period;
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
  // Knots a held-up read leaves a period late or not (held_up_reads.hpp): the offset is fitted without them,
  // the fine trace places them, and the fit is redone on the knots as placed (its scale and residuals are
  // what every piece is judged against).
  // Nor to a loose knot (kLooseKnotPostings, without_loose_knots).
  const bool ambiguous = has_ambiguous_knots(counter_);
  const bool loose = has_loose_knots(counter_);
  const auto align = [&](const CounterTimeline& counter) {
    const auto fit = [&](const CounterTimeline& on) {
      return known_offset ? alignment_at(on, *fine_, *known_offset) : estimate_alignment(on, *fine_);
    };
    return loose ? fit(without_loose_knots(counter)) : fit(counter);
  };
  if (fine_ != nullptr) alignment_ = align(ambiguous ? without_ambiguous_knots(counter_) : counter_);
  place_ambiguous_knots(counter_.pieces, fine_, alignment_);
  if (fine_ != nullptr && ambiguous) alignment_ = align(counter_);
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
    piece.begin_uncertainty = i > 0 ? counter_.pieces[i - 1].end_uncertainty : posting_period_ / 2;
    piece.end_uncertainty = source.end_uncertainty;
    piece.known = source.energy_j.has_value();
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
    if (!piece.known) unknown_total_j_ += piece.energy_j;
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
      const double gaps_j =
          use_fine && fine_ == &samples_ ? sample_gaps_uncertainty_j(t0, t1, offset, true) : 0.0;
      double bar = edge_uncertainty_j(t0, use_fine) + edge_uncertainty_j(t1, use_fine) +
                   unknown_uncertainty_j(t0, t1) + gaps_j;
      const std::size_t first = first_piece_after(t0), last = first_piece_after(t1);
      if (first == last && first > 0 && t0 >= pieces_[first - 1].begin && t1 <= pieces_[first - 1].end) {
        // Inside one piece both edges share the piece's errors, which cancel but for the window's own share:
        // the fine trace's relative error and its ends' misplacement relative to the piece's length. And
        // the counter bounds it: the true energy lies in [0, the piece's energy].
        const Piece& piece = pieces_[first - 1];
        const Nanos length = piece.end - piece.begin;
        const double knot_j = std::max(power_w(piece.energy_j, length) *
                                           to_seconds(std::max(piece.begin_uncertainty, piece.end_uncertainty)),
                                       knot_stretch_j(piece, use_fine));
        if (use_fine && piece.scale && length > Nanos{0}) {
          const double relative = alignment_.residual_relative + std::abs(*piece.scale / alignment_.scale - 1) +
                                  ratio(piece.begin_uncertainty + piece.end_uncertainty, length);
          bar = std::min(bar,
                         relative * joules + offset_uncertainty_j(t0) + offset_uncertainty_j(t1) + gaps_j);
        }
        bar = std::min(bar, std::max(joules, piece.energy_j - joules) + knot_j);
      }
      WindowEnergy e{std::max(0.0, joules), use_fine ? reconciled_method_ : EnergyMethod::kCounter, bar};
      // Beside a knot as uncertain as a call held up across many postings, an edge may be known better from
      // the knots beyond it through the samples, or from the reads alone (energy_accounting_edges.cpp).
      if (const auto narrowed = beside_loose_knots(t0, t1, use_fine, e)) e = *narrowed;
      e.pieces = std::pair{pieces_[first == 0 ? 0 : first - 1].begin, pieces_[last == 0 ? 0 : last - 1].begin};
      return e;
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
  // The first and last reads' values were posted up to a period before them: the span the difference
  // covers is off by that much at each end (the two partly cancel).
  const Nanos span = counter_.last_read - counter_.first_read;
  const double lag_j = power_w(total_j_, span) * to_seconds(posting_period_);
  return WindowEnergy{total_j_, method, lag_j + unknown_uncertainty_j(counter_.first_read, counter_.last_read)};
}

WindowEnergy EnergyAccounting::unreconciled(Nanos t0, Nanos t1) const {
  auto integrated = [&](const PowerCurve& curve, EnergyMethod method, double relative_bar) {
    const double joules = curve.integral_j(t0, t1);
    return WindowEnergy{joules, method, relative_bar * std::abs(joules)};
  };
  if (samples_.covers(t0, t1, kCoverageTolerance)) {
    WindowEnergy e = integrated(samples_, EnergyMethod::kSamples, kSamplesRelativeBar);
    e.uncertainty_j += sample_gaps_uncertainty_j(t0, t1, Nanos{0}, false);
    return e;
  }
  if (instant_.covers(t0, t1, kCoverageTolerance))
    return integrated(instant_, EnergyMethod::kInstantPower, kInstantRelativeBar);
  if (average_.covers(t0, t1, kCoverageTolerance))
    return integrated(average_, EnergyMethod::kAveragePower, kAverageRelativeBar);
  return WindowEnergy{};
}

// How wrong the reconciled cumulative energy at t may be. Inside a piece the counter fixes the piece's total;
// only its split at t is modelled: never wrong by more than the larger part (the hard bound), and with a
// fine trace by about how badly that trace explained the counter there (its piece's scale against the
// overall one, plus the run's relative residual) times the part of the piece on the shorter side of t. Either way the piece's ends may be off by
// their knots' uncertainty, which moves the piece's power times that much across t. Before the first piece
// or after the last the figure is extrapolated: all of it is uncertain.
double EnergyAccounting::edge_uncertainty_j(Nanos t, bool use_fine) const {
  const std::size_t after = first_piece_after(t);
  const Piece& piece = pieces_[after == 0 ? 0 : after - 1];
  const Nanos length = piece.end - piece.begin;
  const double power = power_w(piece.energy_j, length);
  const double knot_j = std::max(power * to_seconds(std::max(piece.begin_uncertainty, piece.end_uncertainty)),
                                  knot_stretch_j(piece, use_fine));
  const double at_t = reconciled_cumulative_j(t, use_fine);
  if (t < piece.begin) return std::abs(piece.start_j - at_t) + knot_j;
  if (t > piece.end) return std::abs(at_t - (piece.start_j + piece.energy_j)) + knot_j;
  const double before = std::clamp(at_t - piece.start_j, 0.0, piece.energy_j);
  const double hard = std::max(before, piece.energy_j - before);
  // Spread evenly, the piece's energy is misplaced by no more than the power (kPeakToMean times its
  // average, as in counter_only) over the time to its nearer end.
  const Nanos to_knot = std::min(t - piece.begin, piece.end - t);
  double split = std::min(hard, kPeakToMean * power * to_seconds(to_knot));
  if (use_fine && piece.scale) {
    const double deviation = std::abs(*piece.scale / alignment_.scale - 1);
    // The fine trace splits the piece; the counter fixes its sum. So the split at t is wrong by the fine
    // trace's error over the shorter side of t, taken at its relative error over whole intervals, and by
    // the fine trace's offset being off.
    split = std::min(hard, (alignment_.residual_relative + deviation) * std::min(before, piece.energy_j - before) +
                               offset_uncertainty_j(t));
  }
  return split + knot_j;
}

// A knot off by its uncertainty moves the energy of the stretch it may move over across an edge. The piece's
// mean power prices that stretch, unless the knot may be off by most of a period (a held-up read's whose
// placement the samples could not settle): left a period late, it stretches its piece by a period (at a steady
// 78 W the piece's mean read 39 W, its bar half the posting it missed; docs/evidence/pinned-h100.md). There,
// with a fine trace, what it drew over the stretch either side of the knot (at the overall scale) is the price
// where it is the larger. A knot known to the grid's few ms, or to half a period without a grid, keeps the
// mean: its piece's length is right to that, and the bars' coverage was measured so (energy-checks.md).
double EnergyAccounting::knot_stretch_j(const Piece& piece, bool use_fine) const {
  if (!use_fine || fine_ == nullptr) return 0;
  const Nanos offset = alignment_.offset;
  const auto either_side_j = [&](Nanos knot, Nanos uncertainty) {
    if (uncertainty < posting_period_ * 3 / 4) return 0.0;
    const double at = fine_->cumulative_j(knot + offset);
    return std::max(at - fine_->cumulative_j(knot + offset - uncertainty),
                    fine_->cumulative_j(knot + offset + uncertainty) - at);
  };
  return alignment_.scale * std::max(either_side_j(piece.begin, piece.begin_uncertainty),
                                     either_side_j(piece.end, piece.end_uncertainty));
}

// A window edge inside a stretch whose samples were dropped (GpuTrace::sample_gaps): the fine trace holds one
// sample's mean over the stretch, so how its energy splits at the edge is unknown: all of it is on the bar
// (with the sample after a gap a burst's, a 100 ms window inside read 59.8 J against 10 J before). "Inside"
// is up to the offset's uncertainty (the larger of kOffsetUncertainty and the alignment's): an edge that
// far outside a stretch may truly lie in it. Both edges meeting one stretch: the window's share of it is
// unknown, but no more than the stretch's energy, once. Reconciled, a window that holds a stretch whole
// has its energy from the counter; samples alone (offset 0), nothing but that one held sample tells the
// stretch's energy, so every stretch the window meets is on its bar (a 1 s window around a 200 ms gap read
// 280 J against 118 J with a 14 J bar before); their offset is no better known, so the reach is the same.
double EnergyAccounting::sample_gaps_uncertainty_j(Nanos t0, Nanos t1, Nanos offset, bool reconciled) const {
  if (sample_gaps_.empty()) return 0;
  const Nanos reach = std::max(kOffsetUncertainty, alignment_.offset_uncertainty);
  // The gaps (at - reach, at + reach) meets, as indices [first, last): sorted and apart, they are
  // consecutive, from the first that ends after at - reach; a binary search and then a step per gap met.
  const auto meeting = [&](Nanos t) -> std::pair<std::size_t, std::size_t> {
    const Nanos at = t + offset;
    const auto first = std::partition_point(sample_gaps_.begin(), sample_gaps_.end(),
                                            [&](const SampleGap& gap) { return gap.before <= at - reach; });
    auto last = first;
    while (last != sample_gaps_.end() && last->after < at + reach) ++last;
    return {static_cast<std::size_t>(first - sample_gaps_.begin()),
            static_cast<std::size_t>(last - sample_gaps_.begin())};
  };
  const auto [first0, last0] = meeting(t0);
  const auto [first1, last1] = meeting(t1);
  if (!reconciled) return gaps_cumulative_j_[last1] - gaps_cumulative_j_[first0];
  const auto energy_j = [&](std::size_t i) {
    return reconciled_cumulative_j(sample_gaps_[i].before - offset, true) -
           reconciled_cumulative_j(sample_gaps_[i].after - offset, true);
  };
  // t0 <= t1, so t1's gaps start and end no earlier than t0's: those they share are counted with t0's.
  double joules = 0;
  for (std::size_t i = first0; i < last0; ++i) joules += energy_j(i);
  for (std::size_t i = std::max(first1, last0); i < last1; ++i) joules += energy_j(i);
  return joules;
}

// An offset off by kOffsetUncertainty moves an edge at t across the fine trace's change of power there:
// the energy of the stretch before t and the one after differ by that much.
double EnergyAccounting::offset_uncertainty_j(Nanos t) const {
  if (fine_ == nullptr) return 0;
  const Nanos at = t + alignment_.offset;
  const double before = fine_->cumulative_j(at) - fine_->cumulative_j(at - kOffsetUncertainty);
  const double after = fine_->cumulative_j(at + kOffsetUncertainty) - fine_->cumulative_j(at);
  double term = alignment_.scale * std::abs(after - before);
  if (alignment_.offset_uncertainty <= kOffsetUncertainty || pieces_.empty()) return term;
  // The search could not tell the offset within one sample (alignment.hpp: a load the counter's intervals
  // do not see shifted): t's counter interval is split as every offset it allowed would split it, and the
  // farthest of those splits from the one used is the term (the caller caps it at the interval's larger part).
  const std::size_t after_index = first_piece_after(t);
  const Piece& piece = pieces_[after_index == 0 ? 0 : after_index - 1];
  if (!piece.scale || t < piece.begin || t > piece.end) return term;
  const auto split_j = [&](Nanos offset) -> std::optional<double> {
    const double begin_j = fine_->cumulative_j(piece.begin + offset);
    const double piece_j = fine_->cumulative_j(piece.end + offset) - begin_j;
    if (!(piece_j > 0)) return std::nullopt;
    return piece.energy_j * (fine_->cumulative_j(t + offset) - begin_j) / piece_j;
  };
  const auto used_j = split_j(alignment_.offset);
  if (!used_j) return term;
  const Nanos reach = alignment_.offset_uncertainty;
  const Nanos step = std::max(kOffsetUncertainty / 2, reach / 32);
  for (Nanos shift = -reach; shift <= reach; shift += step)
    if (const auto other_j = split_j(alignment_.offset + shift)) term = std::max(term, std::abs(*other_j - *used_j));
  return term;
}

// Energy estimated across counter breaks inside [t0, t1] is known only to the fine trace's overall scale:
// half of it is taken as its bar.
double EnergyAccounting::unknown_uncertainty_j(Nanos t0, Nanos t1) const {
  if (unknown_total_j_ <= 0) return 0;
  double unknown_j = 0;
  for (const Piece& piece : pieces_) {
    if (piece.known || piece.end <= t0 || piece.begin >= t1) continue;
    const Nanos overlap = std::min(piece.end, t1) - std::max(piece.begin, t0);
    unknown_j += piece.energy_j * ratio(overlap, piece.end - piece.begin);
  }
  return unknown_j / 2;
}

double EnergyAccounting::counter_cumulative_j(Nanos t) const {
  const auto it = std::upper_bound(read_times_.begin(), read_times_.end(), t);
  if (it == read_times_.begin()) return read_cumulative_j_.front();
  if (it == read_times_.end()) return read_cumulative_j_.back();
  const auto i = static_cast<std::size_t>(it - read_times_.begin());
  const Nanos span = read_times_[i] - read_times_[i - 1];
  const double rise = read_cumulative_j_[i] - read_cumulative_j_[i - 1];
  return read_cumulative_j_[i - 1] + (span > Nanos{0} ? rise * ratio(t - read_times_[i - 1], span) : rise);
}

WindowEnergy EnergyAccounting::counter_only(Nanos t0, Nanos t1) const {
  if (t1 < t0) throw usage_error("energy window ends before it starts: pass the earlier time first");
  if (read_times_.size() < 2) return WindowEnergy{};
  const Nanos first = read_times_.front(), last = read_times_.back();
  if (t0 < first - kCoverageTolerance || t1 > last + kCoverageTolerance) return WindowEnergy{};
  const double joules = counter_cumulative_j(t1) - counter_cumulative_j(t0);
  // Each edge: the interval around it is split evenly (wrong by at most its larger part), and the reads'
  // values are up to a posting period old; past the first or last read, the uncovered time at the
  // neighbouring interval's power.
  // The power about t: over the reads at least a period and a half either side, so that it spans postings
  // (reads between two postings see no change at all).
  auto power_about_w = [&](Nanos t) {
    const Nanos reach = posting_period_ * 3 / 2;
    const auto a = std::upper_bound(read_times_.begin(), read_times_.end(), t - reach);
    const auto b = std::lower_bound(read_times_.begin(), read_times_.end(), t + reach);
    const auto i = a == read_times_.begin() ? std::size_t{0} : static_cast<std::size_t>(a - read_times_.begin()) - 1;
    const auto j = b == read_times_.end() ? read_times_.size() - 1 : static_cast<std::size_t>(b - read_times_.begin());
    return power_w(read_cumulative_j_[j] - read_cumulative_j_[i], read_times_[j] - read_times_[i]);
  };
  auto edge_j = [&](Nanos t) {
    const auto it = std::upper_bound(read_times_.begin(), read_times_.end(), t);
    const std::size_t i = std::clamp<std::size_t>(static_cast<std::size_t>(it - read_times_.begin()), 1,
                                                   read_times_.size() - 1);
    const Nanos span = read_times_[i] - read_times_[i - 1];
    const double rise = read_cumulative_j_[i] - read_cumulative_j_[i - 1];
    const Nanos inside = std::clamp(t, read_times_[i - 1], read_times_[i]);
    const double before = span > Nanos{0} ? rise * ratio(inside - read_times_[i - 1], span) : 0;
    const Nanos outside = t - inside;
    // Spread evenly, the interval's energy is misplaced by at most its larger part, and by no more than the
    // power (taken as kPeakToMean times its average about t) over the time to the
    // nearer read.
    const double power = power_about_w(t);
    const Nanos to_read = std::min(inside - read_times_[i - 1], read_times_[i] - inside);
    const double split = std::min(std::max(before, rise - before), kPeakToMean * power * to_seconds(to_read));
    // A read's value may be as old as its call is long: a read held up for seconds moves its cumulative
    // value by that much time at the power about it.
    const Nanos held_up = std::max(read_costs_[i - 1], read_costs_[i]);
    return split + kPeakToMean * power * to_seconds(posting_period_ + held_up + std::chrono::abs(outside));
  };
  return WindowEnergy{std::max(0.0, joules), EnergyMethod::kCounter, edge_j(t0) + edge_j(t1)};
}

CounterBrackets EnergyAccounting::brackets(Nanos t0, Nanos t1) const {
  CounterBrackets b;
  b.posting_period = posting_period_;
  if (read_times_.empty()) return b;
  // A read's value is taken somewhere inside its call: a value surely from before t0 is a read returned by
  // then, one surely from after t1 a read whose call began after it. Returns alone would not do: a read held
  // up for seconds past t1 (a starved sampler: 4.5 s on an H100, docs/evidence/pinned-h100.md) may hold the
  // value from before t1, and the outer bracket came out 1.5 kJ short of a right figure, which the check
  // then replaced by a wrong one.
  // Outer: the last read returned at or before t0 and the first begun at or after t1.
  const auto at_or_before_t0 = std::upper_bound(read_times_.begin(), read_times_.end(), t0);
  const auto begun_after_t1 = std::lower_bound(read_starts_.begin(), read_starts_.end(), t1);
  if (at_or_before_t0 != read_times_.begin() && begun_after_t1 != read_starts_.end()) {
    const auto a = static_cast<std::size_t>(at_or_before_t0 - read_times_.begin()) - 1;
    const auto z = static_cast<std::size_t>(begun_after_t1 - read_starts_.begin());
    b.outer_j = read_cumulative_j_[z] - read_cumulative_j_[a];
  }
  // Inner: the first read begun at or after t0 and the last returned at or before t1.
  const auto c = static_cast<std::size_t>(std::lower_bound(read_starts_.begin(), read_starts_.end(), t0) -
                                          read_starts_.begin());
  const auto d_end = static_cast<std::size_t>(std::upper_bound(read_times_.begin(), read_times_.end(), t1) -
                                              read_times_.begin());
  if (d_end > 0 && c < d_end - 1) b.inner_j = read_cumulative_j_[d_end - 1] - read_cumulative_j_[c];
  return b;
}

void EnergyAccounting::distrust_fine_trace() {
  if (fine_ == nullptr) return;
  fine_ = nullptr;
  reconciled_method_ = EnergyMethod::kCounter;
  for (Piece& piece : pieces_) piece.scale.reset();
}

std::optional<Alignment> EnergyAccounting::alignment() const {
  if (fine_ == nullptr) return std::nullopt;
  return alignment_;
}

WindowEnergy window_energy(const GpuTrace& trace, Nanos t0, Nanos t1) {
  return EnergyAccounting(trace).energy(t0, t1);
}

}  // namespace wattwise::sampling
