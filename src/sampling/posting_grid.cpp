// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/posting_grid.hpp"

#include <algorithm>
#include <cmath>

namespace wattwise::sampling {
namespace {

double ns(Nanos t) {
  return static_cast<double>(t.count());
}

Nanos midpoint(const PostingBracket& b) {
  return b.earliest + b.width() / 2;
}

// A grid phase + n * period lies in every bracket iff e_i - n_i * P <= l_j - n_j * P for all pairs (i, j),
// which bounds P from both sides (each bracket widened by kBracketSlack). A guess within those bounds is
// kept: a short burst allows a wide range (13 ms brackets over 5 postings: +-3 ms) and must not move a
// right guess; a guess the brackets rule out gives way to the middle of the bounds, which a long baseline
// narrows to the device's own period.
// (A least-squares slope of the midpoints is biased when the brackets' positions around their postings
// drift, as a learning burst's do.) Only the first and last kFeasibilityBrackets brackets are paired: they
// hold the baseline, and a long dense trace then costs no more than a burst.
constexpr std::size_t kFeasibilityBrackets = 24;

// Posting numbers of the first `count` brackets (sorted): each from its predecessor and the gap between
// them, so that a period a little off misnumbers only across a gap of half a period's drift, not over the
// whole span (a burst, a gap of seconds, another burst).
std::vector<double> number_postings(const std::vector<PostingBracket>& brackets, std::size_t count,
                                    double period_ns) {
  std::vector<double> n(count, 0);
  for (std::size_t i = 1; i < count; ++i)
    n[i] = n[i - 1] + std::round(ns(midpoint(brackets[i]) - midpoint(brackets[i - 1])) / period_ns);
  return n;
}

std::optional<std::pair<double, double>> feasible_periods_ns(const std::vector<PostingBracket>& brackets,
                                                             std::size_t count, double period_ns) {
  const std::vector<double> all_n = number_postings(brackets, count, period_ns);
  std::vector<const PostingBracket*> ends;
  std::vector<double> n;
  for (std::size_t i = 0; i < count; ++i) {
    if (i < kFeasibilityBrackets || i + kFeasibilityBrackets >= count) {
      ends.push_back(&brackets[i]);
      n.push_back(all_n[i]);
    }
  }
  const double slack = 2 * ns(kBracketSlack);
  double low = 0, high = 1e30;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    for (std::size_t j = 0; j < ends.size(); ++j) {
      const double dn = n[j] - n[i];
      if (dn <= 0) continue;
      low = std::max(low, (ns(ends[j]->earliest) - ns(ends[i]->latest) - slack) / dn);
      high = std::min(high, (ns(ends[j]->latest) - ns(ends[i]->earliest) + slack) / dn);
    }
  }
  if (low > high) return std::nullopt;  // no regular grid explains these brackets
  return std::make_pair(low, high);
}

// The period over a span that grows by half each pass, so that the postings far from the first are
// numbered with a period already narrowed by the nearer ones (a guess 4% off misnumbers by the 12th).
std::optional<double> fit_period_ns(const std::vector<PostingBracket>& brackets, double guess_ns) {
  double period_ns = guess_ns;
  const double t0 = ns(midpoint(brackets.front()));
  const double full_span = ns(midpoint(brackets.back())) - t0;
  std::size_t count = 0;
  for (double span = 8 * period_ns;; span *= 1.5) {
    while (count < brackets.size() && ns(midpoint(brackets[count])) - t0 <= span) ++count;
    const auto feasible = feasible_periods_ns(brackets, count, period_ns);
    if (!feasible) return std::nullopt;
    const auto [low, high] = *feasible;
    period_ns = guess_ns >= low && guess_ns <= high ? guess_ns : (low + high) / 2;
    if (span >= full_span) return period_ns;
  }
}

}  // namespace

Nanos PostingGrid::at_or_before(Nanos t) const {
  const std::int64_t n = (t - phase) / period - ((t - phase) % period < Nanos{0} ? 1 : 0);
  return phase + period * n;
}

Nanos PostingGrid::after(Nanos t) const {
  return at_or_before(t) + period;
}

std::optional<PostingGrid> fit_posting_grid(const std::vector<PostingBracket>& all, Nanos period_guess,
                                            std::size_t min_brackets) {
  std::vector<PostingBracket> brackets;
  for (const PostingBracket& b : all) {
    if (b.width() >= Nanos{0} && ns(b.width()) < kSinglePostingWidth * ns(period_guess))
      brackets.push_back(b);
  }
  if (brackets.size() < std::max<std::size_t>(min_brackets, 1)) return std::nullopt;
  std::sort(brackets.begin(), brackets.end(),
            [](const PostingBracket& a, const PostingBracket& b) { return a.earliest < b.earliest; });

  PostingGrid grid;
  double period_ns = ns(period_guess);
  const double span_ns = ns(midpoint(brackets.back()) - midpoint(brackets.front()));
  if (span_ns >= kPeriodFitMinPeriods * period_ns) {
    const std::optional<double> fitted = fit_period_ns(brackets, period_ns);
    if (!fitted) return std::nullopt;
    if (std::fabs(*fitted - period_ns) > kPeriodTolerance * period_ns) return std::nullopt;
    period_ns = *fitted;
    grid.period_fitted = true;
  }

  // Shift every bracket back by its posting number; the deepest overlap of the shifted brackets holds
  // the phase. Sweep over their ends: +1 at each start, -1 at each end.
  const std::vector<double> n = number_postings(brackets, brackets.size(), period_ns);
  std::vector<std::pair<double, int>> ends;
  ends.reserve(2 * brackets.size());
  for (std::size_t i = 0; i < brackets.size(); ++i) {
    const PostingBracket& b = brackets[i];
    const double shift = period_ns * n[i];
    ends.emplace_back(ns(b.earliest - kBracketSlack) - shift, +1);
    ends.emplace_back(ns(b.latest + kBracketSlack) - shift, -1);
  }
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  });
  int depth = 0, best_depth = 0;
  double best_from = 0, best_to = 0;
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    depth += ends[i].second;
    if (depth > best_depth) {
      best_depth = depth;
      best_from = ends[i].first;
      best_to = ends[i + 1].first;
    }
  }
  if (static_cast<double>(best_depth) < kGridAgreement * static_cast<double>(brackets.size()))
    return std::nullopt;
  grid.period = Nanos{std::llround(period_ns)};
  grid.phase = Nanos{std::llround((best_from + best_to) / 2)};
  grid.uncertainty = Nanos{std::llround((best_to - best_from) / 2)};
  return grid;
}

namespace {

// As the counter timeline's fit (counter_timeline.cpp): two single-posting brackets make a grid.
constexpr std::size_t kLearnerMinBrackets = 2;

// A bracket's ends relative to the posting of `grid` it holds.
std::pair<Nanos, Nanos> relative_to(const PostingGrid& grid, const PostingBracket& b) {
  const Nanos posting = grid.at_or_before(midpoint(b) + grid.period / 2);
  return {b.earliest - posting, b.latest - posting};
}

}  // namespace

void PostingGridLearner::add(const std::vector<PostingBracket>& all) {
  std::vector<PostingBracket> fresh;
  for (const PostingBracket& b : all) {
    if (added_until_ && b.earliest <= *added_until_) continue;
    if (b.width() >= Nanos{0} && ns(b.width()) < kSinglePostingWidth * ns(kAssumedPostingPeriod)) fresh.push_back(b);
  }
  if (fresh.empty()) return;
  std::sort(fresh.begin(), fresh.end(),
            [](const PostingBracket& a, const PostingBracket& b) { return a.earliest < b.earliest; });
  added_until_ = fresh.back().earliest;
  // The first brackets stay; the most recent roll on, and those they push out may bound the phase.
  std::vector<PostingBracket> candidates = std::move(early_side_);
  candidates.insert(candidates.end(), late_side_.begin(), late_side_.end());
  for (const PostingBracket& b : fresh) {
    if (first_.size() < kKeptPerGroup) {
      first_.push_back(b);
      continue;
    }
    recent_.push_back(b);
    if (recent_.size() > kKeptPerGroup) {
      candidates.push_back(recent_.front());
      recent_.erase(recent_.begin());
    }
  }
  std::vector<PostingBracket> every = first_;
  every.insert(every.end(), recent_.begin(), recent_.end());
  every.insert(every.end(), candidates.begin(), candidates.end());
  if (std::optional<PostingGrid> fitted = fit_posting_grid(every, kAssumedPostingPeriod, kLearnerMinBrackets))
    grid_ = fitted;
  early_side_.clear();
  late_side_.clear();
  if (!grid_) return;
  // Of the candidates that agree with the grid (the posting inside the bracket, give or take the slack),
  // those ending closest after their posting and those beginning closest before it: the deepest overlap,
  // and so the phase, is theirs.
  std::vector<std::pair<std::pair<Nanos, Nanos>, PostingBracket>> agreeing;
  for (const PostingBracket& b : candidates) {
    const auto ends = relative_to(*grid_, b);
    if (ends.first - kBracketSlack <= Nanos{0} && ends.second + kBracketSlack >= Nanos{0}) agreeing.push_back({ends, b});
  }
  const auto keep = [&](std::vector<PostingBracket>& side, auto tighter) {
    const std::size_t count = std::min(kKeptPerGroup, agreeing.size());
    std::partial_sort(agreeing.begin(), agreeing.begin() + static_cast<std::ptrdiff_t>(count), agreeing.end(), tighter);
    for (std::size_t i = 0; i < count; ++i) side.push_back(agreeing[i].second);
    agreeing.erase(agreeing.begin(), agreeing.begin() + static_cast<std::ptrdiff_t>(count));
  };
  keep(early_side_, [](const auto& a, const auto& b) { return a.first.first > b.first.first; });
  keep(late_side_, [](const auto& a, const auto& b) { return a.first.second < b.first.second; });
}

}  // namespace wattwise::sampling
