#include "experiment/adaptive_sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/fit.hpp"
#include "plan/plan.hpp"

namespace wattwise::experiment {
namespace {

constexpr double kZ95 = 1.96;
// The fit's window, in grid steps either side of the lowest mean. 6 (30 W on a 5 W grid) beat 3, 4, 5, 7, 8
// and 10 on seeds 101..120 with the 1.74-run budget: a wider fit averages more repeats' noise, at the cost
// of some bias where a curve is far from a parabola (simulated inception3's E, docs/evidence).
constexpr double kFitHalfWidthSteps = 6;
// ... and of those only the values whose mean is within this fraction of the lowest mean: a steep side
// (energy far below the optimal limit: +26% 20 W below it on the simulated inception3) is no parabola
// and drags the vertex to the other side. 0.10 chosen on seeds 101..120 (0.02 to 0.2 tried).
constexpr double kFitMaxExcess = 0.10;

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

  std::size_t count(std::size_t i) const { return by_index[i].runs.size(); }
  double metric_of_run(const analysis::MetricSpec& m, const AdaptiveObservation& r) const {
    return analysis::metric_value(m, r.energy_j, r.time_s, reference);
  }
  double metric_mean(const analysis::MetricSpec& m, std::size_t i) const {
    return analysis::metric_value(m, by_index[i].mean_energy_j(), by_index[i].mean_time_s(), reference);
  }
};

State state_of(const AdaptiveConfig& config, const std::vector<AdaptiveObservation>& runs) {
  State s{config, std::vector<ValueRuns>(config.grid.size()), {}, {}};
  for (const auto& r : runs) s.by_index[nearest_index(config.grid, r.value)].runs.push_back(r);
  for (std::size_t i = 0; i < config.grid.size(); ++i)
    if (s.count(i) > 0) s.measured.push_back(i);
  return s;
}

// The vertex of a quadratic through every run near the lowest mean: the fit averages the noise of
// neighbouring values, which a plain "lowest mean" does not (it picks whichever value was lucky).
AdaptiveBest best_of(const State& s, const analysis::MetricSpec& metric) {
  const auto& m = s.measured;
  std::size_t lowest = 0;
  for (std::size_t p = 1; p < m.size(); ++p)
    if (s.metric_mean(metric, m[p]) < s.metric_mean(metric, m[lowest])) lowest = p;
  AdaptiveBest best{metric, s.config.grid[m[lowest]], s.config.grid[m[lowest]]};
  if (m.size() < 3) return best;
  // The window: the measured values within kFitHalfWidthSteps grid steps of the lowest mean and within
  // kFitMaxExcess of its metric, at least its nearest measured neighbour on each side. Not the whole grid,
  // because the curves are not parabolas far from their optimum (energy rises steeply below it and gently
  // above): a wide fit is pulled to the gentle side.
  const auto& grid = s.config.grid;
  const double step = (grid.back() - grid.front()) / double(grid.size() - 1);
  const double half_width = kFitHalfWidthSteps * step + 1e-9;
  const double lowest_mean = s.metric_mean(metric, m[lowest]);
  const auto in_window = [&](std::size_t p) {
    return std::abs(grid[m[p]] - grid[m[lowest]]) <= half_width &&
           s.metric_mean(metric, m[p]) <= lowest_mean * (1 + kFitMaxExcess);
  };
  std::size_t first = lowest, last = lowest;
  while (first > 0 && in_window(first - 1)) --first;
  while (last + 1 < m.size() && in_window(last + 1)) ++last;
  // A neighbour far above the lowest mean is not forced in: the vertex then lies at the window's edge, and
  // refining it bisects towards that neighbour, which measures the steep side where it matters.
  const auto below_excess = [&](std::size_t p) {
    return s.metric_mean(metric, m[p]) <= lowest_mean * (1 + kFitMaxExcess);
  };
  if (first == lowest && first > 0 && below_excess(first - 1)) --first;
  if (last == lowest && last + 1 < m.size() && below_excess(last + 1)) ++last;
  // Fewer than 3 values: widen on a side that is not steep first, beyond kFitHalfWidthSteps if need be.
  while (last - first < 2 && last + 1 < m.size() && below_excess(last + 1)) ++last;
  while (last - first < 2 && first > 0 && below_excess(first - 1)) --first;
  if (last - first < 2) {  // at an end of the grid or between steep sides: the nearest on one side
    if (first == 0)
      last = std::min<std::size_t>(2, m.size() - 1);
    else
      first = last - 2;
  }
  std::vector<double> xs, ys;
  for (std::size_t p = first; p <= last; ++p) {
    for (const auto& r : s.by_index[m[p]].runs) {
      xs.push_back(grid[m[p]]);
      ys.push_back(s.metric_of_run(metric, r));
    }
  }
  const analysis::QuadraticFit fit = analysis::fit_quadratic(xs, ys);
  best.fitted_value = grid[nearest_index(grid, fit.optimum_x)];
  double pick = grid[m.front()];
  for (std::size_t i : m)
    if (std::abs(grid[i] - fit.optimum_x) < std::abs(pick - fit.optimum_x)) pick = grid[i];
  best.pick_value = pick;
  return best;
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

std::optional<std::size_t> next_repeat(const State& s, const std::vector<AdaptiveBest>& best,
                                       unsigned needed) {
  // The values the fits use (and one step beyond, where the next fit's window may move): repeating them
  // narrows the vertex. The reference too: every metric is normalised to it (EDS weighs E and t by it).
  std::vector<std::size_t> near;
  near.push_back(nearest_index(s.config.grid, s.config.reference_value));
  for (const auto& b : best) {
    const double t = static_cast<double>(nearest_index(s.config.grid, b.fitted_value));
    for (std::size_t i : s.measured) {
      const bool in_window = std::abs(static_cast<double>(i) - t) <= kFitHalfWidthSteps + 1;
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
  double used_s = 0;
  for (const auto& r : runs) used_s += r.time_s;
  const bool budget_spent =
      runs.size() >= config.budget_runs || (config.budget_s && used_s >= *config.budget_s);
  const std::string spent = "budget spent";

  for (std::size_t i : coarse_indices(config)) {
    if (s.count(i) > 0) continue;
    if (budget_spent)
      return {AdaptiveStage::kDone, std::nullopt, spent + " before the coarse pass ended", {}};
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
