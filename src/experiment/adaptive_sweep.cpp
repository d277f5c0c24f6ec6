#include "experiment/adaptive_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/analysis.hpp"
#include "analysis/curve_model.hpp"
#include "analysis/slowdown_limit.hpp"
#include "plan/plan.hpp"

namespace wattwise::experiment {
namespace {

constexpr double kZ95 = 1.96;

struct ValueRuns {
  std::vector<AdaptiveObservation> runs;
  double mean_time_s() const { return mean(&AdaptiveObservation::time_s); }
  double mean_energy_j() const { return mean(&AdaptiveObservation::energy_j); }
  double mean(double AdaptiveObservation::*field) const {
    double sum = 0;
    for (const auto& r : runs) sum += r.*field;
    return sum / static_cast<double>(runs.size());
  }
};

std::size_t nearest_index(const std::vector<double>& grid, double value) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < grid.size(); ++i)
    if (std::abs(grid[i] - value) < std::abs(grid[best] - value)) best = i;
  return best;
}

// Everything decide_next works from: runs per grid value, the reference, the measured indices.
struct State {
  const AdaptiveConfig& config;
  std::vector<ValueRuns> by_index;
  std::vector<std::size_t> measured;  // ascending
  analysis::ReferencePoint reference;
  // within_limit's answers, by limit: one decision asks for the same limit once per steering metric and
  // again for the headline, and each answer fits the time curve over every run.
  mutable std::map<double, std::vector<bool>> judged_limits;

  std::size_t count(std::size_t i) const { return by_index[i].runs.size(); }
  double metric_of_run(const analysis::MetricSpec& m, const AdaptiveObservation& r) const {
    return analysis::metric_value(m, r.energy_j, r.time_s, reference);
  }
  double metric_mean(const analysis::MetricSpec& m, std::size_t i) const {
    return analysis::metric_value(m, by_index[i].mean_energy_j(), by_index[i].mean_time_s(), reference);
  }
};

State state_of(const AdaptiveConfig& config, const std::vector<AdaptiveObservation>& runs) {
  State s{config, std::vector<ValueRuns>(config.grid.size()), {}, {}, {}};
  for (const auto& r : runs) s.by_index[nearest_index(config.grid, r.value)].runs.push_back(r);
  for (std::size_t i = 0; i < config.grid.size(); ++i)
    if (s.count(i) > 0) s.measured.push_back(i);
  return s;
}

// Which measured values are within `max_slowdown` of the reference's time, judged as analyze judges it
// (analysis/slowdown_limit.hpp: on the time curve where the values are enough for the decision model);
// indexed by grid value, false for values not measured. Needs the reference measured.
const std::vector<bool>& within_limit(const State& s, double max_slowdown) {
  if (const auto known = s.judged_limits.find(max_slowdown); known != s.judged_limits.end()) return known->second;
  std::vector<analysis::TimeCurvePoint> points;
  std::size_t reference = 0;
  const std::size_t ref_index = nearest_index(s.config.grid, s.config.reference_value);
  for (std::size_t i : s.measured) {
    if (i == ref_index) reference = points.size();
    analysis::TimeCurvePoint p{s.config.grid[i], {}};
    for (const auto& r : s.by_index[i].runs) p.times_s.push_back(r.time_s);
    points.push_back(std::move(p));
  }
  const auto judged = analysis::judge_slowdown_limit(points, reference, max_slowdown,
                                                     s.measured.size() >= analysis::kMinFitValues);
  std::vector<bool> within(s.config.grid.size(), false);
  for (std::size_t k = 0; k < s.measured.size(); ++k) within[s.measured[k]] = judged.within[k];
  return s.judged_limits.emplace(max_slowdown, std::move(within)).first->second;
}

// The decision model of `analyze` (analysis/curve_model.hpp) on the runs so far: a local quadratic around
// the lowest mean, which averages the noise of neighbouring values where a plain "lowest mean" picks
// whichever value was lucky. Its pick is what `analyze` recommends over the same runs.
AdaptiveBest best_of(const State& s, const analysis::MetricSpec& metric, bool limited = true) {
  const auto& grid = s.config.grid;
  const double sign = metric.higher_is_better() ? -1 : 1;
  // Under a slowdown limit only the values within it may be the optimum (the reference always may), as
  // analyze's recommendation under --max-slowdown.
  const std::size_t ref = nearest_index(grid, s.config.reference_value);
  // After the coarse pass, which runs the reference.
  const bool judge = limited && s.config.max_slowdown && s.count(ref) > 0;
  const auto eligible = [&](std::size_t i) { return !judge || within_limit(s, *s.config.max_slowdown)[i]; };
  std::vector<analysis::CurvePoint> points;
  for (std::size_t i : s.measured) {
    analysis::CurvePoint p{grid[i], {}, s.by_index[i].mean_time_s(), eligible(i)};
    for (const auto& r : s.by_index[i].runs) p.values.push_back(sign * s.metric_of_run(metric, r));
    points.push_back(std::move(p));
  }
  if (points.size() < 3) {
    std::optional<std::size_t> lowest;
    for (std::size_t p = 0; p < points.size(); ++p)
      if (points[p].eligible && (!lowest || points[p].mean() < points[*lowest].mean())) lowest = p;
    if (!lowest) lowest = points.size() - 1;
    return {metric, points[*lowest].x, points[*lowest].x};
  }
  // With the resamples: the pick is analyze's (from their median); the steering follows the one fit.
  const analysis::CurveFit fit = analysis::fit_curve(points);
  return {metric, grid[nearest_index(grid, fit.optimum_x)], points[fit.pick].x};
}

// The measured neighbours of grid index t, nearest first on each side.
std::pair<std::optional<std::size_t>, std::optional<std::size_t>> measured_neighbours(const State& s,
                                                                                      std::size_t t) {
  std::optional<std::size_t> left, right;
  for (std::size_t i : s.measured) {
    if (i < t) left = i;
    if (i > t && !right) right = i;
  }
  return {left, right};
}

std::optional<std::size_t> next_refinement(const State& s, std::size_t t) {
  if (s.count(t) == 0) return t;
  const auto [left, right] = measured_neighbours(s, t);
  for (const auto side : {left, right}) {
    if (!side) continue;
    const std::size_t gap = t > *side ? t - *side : *side - t;
    if (gap > 1 && std::abs(s.config.grid[t] - s.config.grid[*side]) > s.config.precision + 1e-9)
      return (t + *side) / 2;  // bisection on the grid, strictly between the two
  }
  return std::nullopt;
}

// The spread of one run's metric around its value's mean, pooled over the values with repeats (relative).
std::optional<double> pooled_cv(const State& s, const analysis::MetricSpec& metric) {
  double ss = 0, df = 0;
  for (std::size_t i : s.measured) {
    const auto& runs = s.by_index[i].runs;
    if (runs.size() < 2) continue;
    const double mean = s.metric_mean(metric, i);
    for (const auto& r : runs) ss += std::pow(s.metric_of_run(metric, r) / mean - 1, 2);
    df += static_cast<double>(runs.size() - 1);
  }
  if (df == 0) return std::nullopt;
  return std::sqrt(ss / df);
}

unsigned repeats_needed(const State& s) {
  std::optional<double> cv;
  for (const auto& metric : s.config.metrics) {
    const auto c = pooled_cv(s, metric);
    if (c && (!cv || *c > *cv)) cv = c;
  }
  const unsigned floor = std::min(kMinRepeatsNearBest, s.config.max_repeats);
  if (!cv) return floor;  // no repeats yet: the first ones tell the noise
  const double n = std::ceil(std::pow(kZ95 * *cv / kTargetCiFraction, 2));
  return static_cast<unsigned>(std::clamp(n, static_cast<double>(floor), double(s.config.max_repeats)));
}

// Where the headline's slowdown limit binds (the unconstrained best of its metric is over the limit): the
// pairs of measured values, neighbours in the knob's order, of which one is within the limit (time at most
// (1 + max_slowdown) x the reference's, on the time curve as analyze judges it) and the other over it. The
// headline's pick is at one of them: near the limit one 5 W step is 1.0-1.7% of energy
// (bench_adaptive_regret), so each pair is refined to one grid step. Repeating both sides as well was tried and picked no better (docs/evidence/adaptive-sweep.md
// "The headline").
// `best`: the metrics' bests so far, reused where the headline's metric is one of them.
std::vector<std::pair<std::size_t, std::size_t>> headline_crossings(const State& s,
                                                                    const std::vector<AdaptiveBest>& best) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  const auto& h = s.config.headline;
  if (!h || s.measured.size() < 2) return pairs;
  if (s.count(nearest_index(s.config.grid, s.config.reference_value)) == 0) return pairs;
  const auto within = [&](std::size_t i) { return bool(within_limit(s, h->max_slowdown)[i]); };
  // The limit binds where the measured value nearest the metric's own fitted optimum is over it.
  const auto same =
      std::find_if(best.begin(), best.end(), [&](const AdaptiveBest& b) { return b.metric == h->metric; });
  const std::size_t optimum = nearest_index(
      s.config.grid, same != best.end() && !s.config.max_slowdown ? same->fitted_value
                                                                  : best_of(s, h->metric, false).fitted_value);
  std::size_t nearest = s.measured.front();
  for (std::size_t i : s.measured)
    if (std::abs(double(i) - double(optimum)) < std::abs(double(nearest) - double(optimum))) nearest = i;
  if (within(nearest)) return pairs;
  for (std::size_t k = 1; k < s.measured.size(); ++k)
    if (within(s.measured[k - 1]) != within(s.measured[k]))
      pairs.emplace_back(s.measured[k - 1], s.measured[k]);
  return pairs;
}

std::optional<std::size_t> next_repeat(const State& s, const std::vector<AdaptiveBest>& best,
                                       unsigned needed) {
  // The values the fits use (and one step beyond, where the next fit's window may move): repeating them
  // narrows the vertex. The reference too: every metric is normalised to it (EDS weighs E and t by it).
  std::vector<std::size_t> near;
  near.push_back(nearest_index(s.config.grid, s.config.reference_value));
  const auto& grid = s.config.grid;
  const double step = grid.size() > 1 ? (grid.back() - grid.front()) / double(grid.size() - 1) : 0;
  const double half_width = analysis::kFitHalfWidthFraction * (grid.back() - grid.front()) + step;
  for (const auto& b : best) {
    for (std::size_t i : s.measured) {
      const bool in_window = std::abs(grid[i] - b.fitted_value) <= half_width * (1 + 1e-9);
      if (in_window && std::find(near.begin(), near.end(), i) == near.end()) near.push_back(i);
    }
  }
  plan::seeded_shuffle(near, s.config.seed + s.measured.size());
  std::optional<std::size_t> chosen;
  for (std::size_t i : near)
    if (s.count(i) < needed && (!chosen || s.count(i) < s.count(*chosen))) chosen = i;
  return chosen;
}

}  // namespace

double runs_time_s(const std::vector<AdaptiveObservation>& runs) {
  double used_s = 0;
  for (const auto& r : runs) used_s += r.time_s;
  return used_s;
}

std::string to_string(AdaptiveStage stage) {
  switch (stage) {
    case AdaptiveStage::kCoarse:
      return "coarse";
    case AdaptiveStage::kRefining:
      return "refining";
    case AdaptiveStage::kRepeating:
      return "repeating";
    case AdaptiveStage::kDone:
      return "done";
  }
  return "?";
}

AdaptiveConfig default_adaptive_config(std::string knob, std::vector<double> grid, double reference_value,
                                       std::vector<analysis::MetricSpec> metrics, std::uint64_t seed) {
  AdaptiveConfig c;
  c.knob = std::move(knob);
  c.grid = std::move(grid);
  c.reference_value = reference_value;
  c.metrics = std::move(metrics);
  c.seed = seed;
  c.budget_runs = static_cast<std::size_t>(std::ceil(kDefaultBudgetPerValue * double(c.grid.size())));
  const double step = c.grid.size() > 1 ? (c.grid.back() - c.grid.front()) / double(c.grid.size() - 1) : 0;
  c.precision = kDefaultPrecisionSteps * step;
  // The headline `sweep` closes with, whatever metrics steer it: analyze's default (print_analysis).
  c.headline =
      AdaptiveHeadline{analysis::AnalysisOptions{}.headline_metric, analysis::kDefaultHeadlineSlowdown};
  return c;
}

std::vector<std::size_t> coarse_indices(const AdaptiveConfig& config) {
  const std::size_t n = config.grid.size();
  const std::size_t k = std::min(kCoarsePoints, n);
  std::vector<std::size_t> indices;
  for (std::size_t i = 0; i < k; ++i)
    indices.push_back(k == 1 ? 0 : static_cast<std::size_t>(std::lround(double(i) * (n - 1) / (k - 1))));
  const std::size_t ref = nearest_index(config.grid, config.reference_value);
  if (std::find(indices.begin(), indices.end(), ref) == indices.end()) indices.push_back(ref);
  plan::seeded_shuffle(indices, config.seed);
  return indices;
}

AdaptiveDecision decide_next(const AdaptiveConfig& config, const std::vector<AdaptiveObservation>& runs) {
  const State s = state_of(config, runs);
  const double used_s = runs_time_s(runs);
  const bool budget_spent =
      runs.size() >= config.budget_runs || (config.budget_s && used_s >= *config.budget_s);
  const std::string spent = "budget spent";

  for (std::size_t i : coarse_indices(config)) {
    if (s.count(i) > 0) continue;
    if (budget_spent)
      return {AdaptiveStage::kDone, std::nullopt, spent + " before the coarse pass ended", {}, true};
    return {AdaptiveStage::kCoarse, config.grid[i], "coarse pass", {}};
  }
  State with_ref = s;
  const auto& ref_runs = s.by_index[nearest_index(config.grid, config.reference_value)];
  with_ref.reference = {ref_runs.mean_energy_j(), ref_runs.mean_time_s()};
  AdaptiveDecision d;
  for (const auto& metric : config.metrics) d.best.push_back(best_of(with_ref, metric));
  if (budget_spent) {
    d.stage = AdaptiveStage::kDone;
    d.reason = spent;
    d.budget_spent = true;
    return d;
  }
  for (const auto& b : d.best) {
    if (auto i = next_refinement(with_ref, nearest_index(config.grid, b.fitted_value))) {
      d.stage = AdaptiveStage::kRefining;
      d.next = config.grid[*i];
      d.reason = "refining " + b.metric.name();
      return d;
    }
  }
  for (const auto& [a, b] : headline_crossings(with_ref, d.best)) {  // after the metrics: they share the runs
    if (b - a > 1) {
      d.stage = AdaptiveStage::kRefining;
      d.next = config.grid[(a + b) / 2];
      d.reason = "refining the headline's limit";
      return d;
    }
  }
  const unsigned needed = repeats_needed(with_ref);
  if (auto i = next_repeat(with_ref, d.best, needed)) {
    d.stage = AdaptiveStage::kRepeating;
    d.next = config.grid[*i];
    d.reason = fmt::format("repeating near the best (run {} of {} here)", with_ref.count(*i) + 1, needed);
    return d;
  }
  d.stage = AdaptiveStage::kDone;
  const std::string unit = config.knob.ends_with("_w") ? " W" : config.knob.ends_with("_mhz") ? " MHz" : "";
  d.reason =
      fmt::format("every optimum known to +-{}{} with {} runs near it", config.precision, unit, needed);
  return d;
}

}  // namespace wattwise::experiment
