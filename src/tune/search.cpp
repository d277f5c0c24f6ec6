#include "tune/search.hpp"

#include "analysis/curve_model.hpp"
#include "analysis/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace wattwise::tune {

namespace {

// Golden section: each new probe sits at 0.382 of the bracket from one end, so that the bracket shrinks by
// 0.618 per probe and one interior point is always reused.
constexpr double kGolden = 0.3819660112501051;
// The coarse scan of the fallback measures about this many candidates over the feasible range.
constexpr std::size_t kScanPoints = 6;
// The final pick is a quadratic through this many measured candidates nearest the bracket.
constexpr std::size_t kFitPoints = 5;
// A bump (not unimodal) must stand out of intervals this many times wider than a comparison's (at 95%).
constexpr double kBumpWidening = 2.0;

}  // namespace

void Search::record(std::size_t index, const ProbeEstimate& estimate) {
  if (index < lowest_feasible_)
    below_edge_[index] = estimate;
  else
    estimates_[index] = estimate;
}

void Search::record_infeasible(std::size_t index) {
  lowest_feasible_ = std::max(lowest_feasible_, index + 1);
  lo_ = std::max(lo_, lowest_feasible_);
  // Candidates below the budget's edge are never taken, whatever they measured.
  for (auto it = estimates_.begin(); it != estimates_.end() && it->first < lowest_feasible_;) {
    below_edge_[it->first] = it->second;
    it = estimates_.erase(it);
  }
}

void Search::set_budget_edge(std::size_t index) {
  if (index >= lowest_feasible_) {
    if (index > 0) record_infeasible(index - 1);
    return;
  }
  if (lo_ == lowest_feasible_) lo_ = index;
  lowest_feasible_ = index;
  for (auto it = below_edge_.lower_bound(index); it != below_edge_.end();) {
    estimates_[it->first] = it->second;
    it = below_edge_.erase(it);
  }
}

bool Search::on_plateau(std::size_t a, std::size_t b) const {
  const auto tie = [](const ProbeEstimate& x, const ProbeEstimate& y) {
    const bool same_score = x.low() <= y.high() && y.low() <= x.high();
    const bool same_time = std::abs(x.mean_time_s - y.mean_time_s) <= x.time_half_s + y.time_half_s;
    return same_score && same_time;
  };
  const auto ea = estimates_.find(a);
  const auto eb = estimates_.find(b);
  if (ea == estimates_.end() || eb == estimates_.end()) return false;
  const ProbeEstimate& x = ea->second;
  const ProbeEstimate& y = eb->second;
  if (x.low() > y.high() || y.low() > x.high()) return false;
  if (tie(x, y)) return true;
  // The higher one ties with a candidate above it: it is on the plateau, and the lower one, as good, is at
  // its edge or below it.
  for (auto above = estimates_.upper_bound(b); above != estimates_.end(); ++above)
    if (tie(y, above->second)) return true;
  return false;
}

double Search::score(std::size_t index) const {
  const auto it = estimates_.find(index);
  return it == estimates_.end() ? std::numeric_limits<double>::infinity() : it->second.score;
}

std::optional<std::size_t> Search::best() const {
  std::optional<std::size_t> best;
  for (const auto& [index, estimate] : estimates_)
    if (!best || estimate.score < score(*best)) best = index;
  return best;
}

std::optional<std::size_t> Search::next() {
  if (scanning_) {
    if (auto index = next_in_scan()) return index;
  }
  return next_in_bracket();
}

std::optional<std::size_t> Search::next_in_scan() {
  while (!scan_.empty()) {
    const std::size_t index = scan_.front();
    scan_.pop_front();
    if (!measured(index)) return index;
  }
  // The scan is done: a golden section between the scan's neighbours of its best.
  scanning_ = false;
  const std::size_t best_index = best().value_or(lowest_feasible_);
  lo_ = std::max(lowest_feasible_, best_index >= scan_stride_ ? best_index - scan_stride_ : 0);
  hi_ = std::min(candidates_ - 1, best_index + scan_stride_);
  return std::nullopt;
}

std::optional<std::size_t> Search::next_in_bracket() {
  // Each pass either returns a candidate to measure or shrinks the bracket, so this ends.
  while (true) {
    if (lowest_feasible_ >= candidates_) return std::nullopt;
    lo_ = std::max(lo_, lowest_feasible_);
    // The budget's edge lies above the bracket: on a unimodal metric the best feasible candidate is the
    // lowest feasible one.
    if (lo_ > hi_) hi_ = lo_;
    if (hi_ - lo_ < 3) return next_in_final_window();
    // Reuse the best measured interior point (golden section keeps the better of its pair); place the other
    // symmetrically, or both at the golden points when none is measured yet.
    std::optional<std::size_t> anchor;
    for (const auto& [index, estimate] : estimates_)
      if (index > lo_ && index < hi_ && (!anchor || estimate.score < score(*anchor))) anchor = index;
    std::size_t c = lo_ + static_cast<std::size_t>(std::lround(kGolden * static_cast<double>(hi_ - lo_)));
    if (anchor) c = *anchor;
    std::size_t d = lo_ + hi_ - c;
    if (c > d) std::swap(c, d);
    if (c == d) d = c + 1;
    if (!measured(c)) return c;
    if (!measured(d)) return d;
    // A unimodal metric has its minimum on the side of the better point. On the plateau that settings above
    // what the job draws make (they change neither its time nor its energy), the two cannot be told apart
    // and the minimum lies below them: the lower side is kept.
    if (score(c) <= score(d) || on_plateau(c, d))
      hi_ = d;
    else
      lo_ = c;
  }
}

std::optional<std::size_t> Search::next_in_final_window() {
  for (std::size_t i = lo_; i <= hi_; ++i)
    if (!measured(i)) return i;
  // The fitted optimum at the edge of the points it rests on, with a candidate beyond not yet measured: the
  // curve may go on falling there (a comparison the noise got wrong on the way may have cut it off).
  const auto fit = fitted_choice();
  if (!fit) return std::nullopt;
  if (fit->choice == fit->lowest && fit->choice > lowest_feasible_ && !measured(fit->choice - 1))
    return fit->choice - 1;
  if (fit->choice == fit->highest && fit->choice + 1 < candidates_ && !measured(fit->choice + 1))
    return fit->choice + 1;
  return std::nullopt;
}

std::optional<Search::FittedChoice> Search::fitted_choice() const {
  // The measured candidates nearest the bracket: each comparison of the search was a pair of noisy
  // estimates, while a curve through several neighbours averages their noise.
  std::vector<std::size_t> nearest;
  for (const auto& entry : estimates_) nearest.push_back(entry.first);
  const double centre = (static_cast<double>(lo_) + static_cast<double>(hi_)) / 2;
  std::sort(nearest.begin(), nearest.end(), [&](std::size_t a, std::size_t b) {
    return std::abs(static_cast<double>(a) - centre) < std::abs(static_cast<double>(b) - centre);
  });
  if (nearest.size() > kFitPoints) nearest.resize(kFitPoints);
  if (nearest.size() < 3) {
    const auto b = best();
    if (!b) return std::nullopt;
    return FittedChoice{*b, *b, *b};
  }
  std::vector<double> xs, ys;
  for (std::size_t i : nearest) {
    xs.push_back(static_cast<double>(i));
    ys.push_back(estimates_.at(i).score);
  }
  const analysis::QuadraticFit fit = analysis::fit_quadratic(xs, ys);
  FittedChoice c;
  c.lowest = *std::min_element(nearest.begin(), nearest.end());
  c.highest = *std::max_element(nearest.begin(), nearest.end());
  c.choice = std::clamp(static_cast<std::size_t>(std::lround(fit.optimum_x)), c.lowest, c.highest);
  return c;
}

std::optional<Search::CurveFitted> Search::curve_fit() const {
  if (estimates_.size() < 3 || !values_) return std::nullopt;
  CurveFitted c;
  std::map<std::size_t, std::pair<const ProbeEstimate*, bool>> all;
  for (const auto& [index, e] : below_edge_) all[index] = {&e, false};
  for (const auto& [index, e] : estimates_) all[index] = {&e, true};
  for (const auto& [index, entry] : all) {
    const ProbeEstimate& e = *entry.first;
    if (e.iterations == 0) continue;
    analysis::CurvePoint p;
    p.x = (*values_)[index];
    p.values.assign(e.iterations, e.score);
    p.mean_time_s = e.mean_time_s;
    p.eligible = entry.second;
    c.points.push_back(std::move(p));
    c.index_of.push_back(index);
  }
  const bool any_eligible =
      std::any_of(c.points.begin(), c.points.end(), [](const analysis::CurvePoint& p) { return p.eligible; });
  if (c.points.size() < 3 || !any_eligible) return std::nullopt;
  c.fit = analysis::fit_curve(c.points, 0, kTunerFitHalfWidthFraction);
  return c;
}

std::optional<std::size_t> Search::refine() const {
  const auto c = curve_fit();
  if (!c) return std::nullopt;
  std::optional<std::size_t> next;
  double nearest = std::numeric_limits<double>::infinity();
  for (std::size_t i = lowest_feasible_; i < candidates_; ++i) {
    if (measured(i)) continue;
    const double d = std::abs((*values_)[i] - c->fit.optimum_x);
    if (d < nearest) nearest = d, next = i;
  }
  return next;
}

std::optional<std::size_t> Search::choice() const {
  // The decision model the sweeps use (analysis/curve_model): a local quadratic across the measured
  // candidates around the lowest mean, each weighted by its iterations, and the fastest candidate whose
  // fitted metric is within the tie margin of the fitted optimum. On a flat curve (EDP) the best of several
  // noisy means is a coin flip between neighbours a few percent apart in noise; the fit pools them. Those
  // over the budget shape the curve but are never picked.
  if (const auto c = curve_fit()) return c->index_of[c->fit.pick];
  const auto fit = fitted_choice();
  if (!fit) return std::nullopt;
  // A curve still falling at the edge of the feasible range (E on most V100 models, down to 150 W): a
  // quadratic through its last points puts the lowest point a little inside, one step short of the edge.
  // When the edge itself measured best, it is the choice.
  const auto b = best();
  const std::size_t top = candidates_ - 1;
  if (b && (*b == lowest_feasible_ || *b == top) &&
      (fit->choice > *b ? fit->choice - *b : *b - fit->choice) == 1)
    return *b;
  return fit->choice;
}

std::optional<std::size_t> Search::check_unimodal() {
  if (fallback_used_) return std::nullopt;
  // Intervals kBumpWidening times as wide as a comparison's: every candidate is set against every other
  // here, and among a dozen noisy estimates one pair apart at 95% is likely (a false bump costs a scan).
  const auto low = [](const ProbeEstimate& e) { return e.score - kBumpWidening * e.score_half; };
  const auto high = [](const ProbeEstimate& e) { return e.score + kBumpWidening * e.score_half; };
  for (auto mid = estimates_.begin(); mid != estimates_.end(); ++mid) {
    bool below_lower = false;
    bool below_higher = false;
    for (auto other = estimates_.begin(); other != estimates_.end(); ++other) {
      if (other == mid || low(mid->second) <= high(other->second)) continue;
      (other->first < mid->first ? below_lower : below_higher) = true;
    }
    if (!below_lower || !below_higher) continue;
    fallback_used_ = true;
    scanning_ = true;
    const std::size_t span = candidates_ - 1 - lowest_feasible_;
    scan_stride_ = std::max<std::size_t>(1, (span + kScanPoints - 1) / kScanPoints);
    scan_.clear();
    for (std::size_t i = lowest_feasible_; i < candidates_; i += scan_stride_) scan_.push_back(i);
    scan_.push_back(candidates_ - 1);
    return mid->first;
  }
  return std::nullopt;
}

}  // namespace wattwise::tune
