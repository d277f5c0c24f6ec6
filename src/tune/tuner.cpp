#include "tune/tuner.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "analysis/statistics.hpp"
#include "core/error.hpp"
#include "tune/probe.hpp"
#include "tune/search.hpp"

namespace wattwise::tune {

namespace {

enum class Phase {
  kBaseline,  // measuring the start value: the reference the metric is normalised to
  kSearch,
  kSettled,
};

// Why a probe ended, for the trace.
enum class ProbeEnd { kNotYet, kPrecise, kWorse, kOverBudget, kCap };

void validate(const TunerConfig& c) {
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(c.min_value) || !finite(c.max_value) || c.min_value > c.max_value || c.max_value <= 0)
    throw usage_error(fmt::format("tune: the knob's range [{}, {}] is empty or inverted; give min <= max",
                                  c.min_value, c.max_value));
  if (!finite(c.step) || c.step <= 0)
    throw usage_error(fmt::format("tune: the knob's step {} must be positive", c.step));
  if (!finite(c.start_value) || c.start_value < c.min_value || c.start_value > c.max_value)
    throw usage_error(fmt::format("tune: the start value {} is outside the knob's range [{}, {}]",
                                  c.start_value, c.min_value, c.max_value));
  if (c.max_slowdown && (!finite(*c.max_slowdown) || *c.max_slowdown < 0))
    throw usage_error("tune: --max-slowdown must be a non-negative percentage, e.g. 10%");
  if (c.confidence != 0.95 && c.confidence != 0.90)
    throw usage_error(fmt::format("tune: confidence {} is not supported; use 0.90 or 0.95", c.confidence));
  if (!finite(c.precision) || c.precision <= 0 || c.precision >= 1)
    throw usage_error(fmt::format("tune: precision {} must be in (0, 1), e.g. 0.01", c.precision));
  if (c.min_probe_iterations < 2 || c.max_probe_iterations < c.min_probe_iterations)
    throw usage_error(
        "tune: a probe needs at least 2 iterations, and its maximum must not be below its minimum");
  if (c.drift_window < 2 || !finite(c.drift_threshold) || c.drift_threshold <= 0)
    throw usage_error("tune: the drift window needs at least 2 iterations and a positive threshold");
}

// The candidates: min + k * step up to max, max itself, and the start value, lowest first.
std::vector<double> candidate_grid(const TunerConfig& c) {
  std::vector<double> grid;
  for (double v = c.min_value; v < c.max_value - 1e-9; v += c.step) grid.push_back(v);
  grid.push_back(c.max_value);
  grid.push_back(c.start_value);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end(), [](double a, double b) { return std::abs(a - b) < 1e-9; }),
             grid.end());
  return grid;
}

}  // namespace

struct Tuner::State {
  TunerConfig config;
  std::vector<double> grid;
  std::size_t start_index = 0;
  std::string unit;

  Phase phase = Phase::kBaseline;
  std::size_t current = 0;  // grid index held now
  std::uint64_t warmup_left = 0;
  std::optional<Probe> probe;  // the iterations kept at the current setting
  std::optional<analysis::ReferencePoint> ref;
  std::optional<Search> search;
  NoisePool noise;                    // of the probes ended in this search
  std::vector<std::uint64_t> fed_at;  // iterations fed at each candidate during this search

  // While settled: the first window after settling, and the window being filled.
  std::optional<Probe> drift_reference;
  std::optional<Probe> drift_window;

  std::uint64_t seen = 0;
  std::uint64_t profiling = 0;
  std::optional<double> settled_value;
  std::vector<Decision> decisions;

  double value() const { return grid[current]; }
  double budget_time_s() const { return (1 + config.max_slowdown.value_or(0)) * ref->time_s; }
  // How wide an estimate's interval may be: +-precision of the estimate itself (a candidate 25% below the
  // start is held to the same relative precision as the start), or of 100% for gain-loss (in percent, around
  // 0).
  double precision_at(const ProbeEstimate& e) const {
    return config.metric.kind == analysis::MetricKind::kGainLoss ? 100 * config.precision
                                                                 : config.precision * std::abs(e.score);
  }

  void hold(std::size_t index) {
    if (index != current) warmup_left = config.warmup_iterations;
    current = index;
    probe.emplace(grid[index]);
  }

  void start_search() {
    phase = Phase::kBaseline;
    ref.reset();
    search.emplace(grid.size());
    noise = NoisePool{};
    fed_at.assign(grid.size(), 0);
    drift_reference.reset();
    drift_window.reset();
    hold(start_index);
  }

  ProbeEnd probe_end(const ProbeEstimate& e) const;
  std::optional<Decision> end_probe(const ProbeEstimate& e, ProbeEnd why);
  std::optional<Decision> watch_drift(const IterationObservation& it);
  Decision decision(DecisionKind kind, double value, const ProbeEstimate& e, std::string reason) const;
};

Decision Tuner::State::decision(DecisionKind kind, double value, const ProbeEstimate& e,
                                std::string reason) const {
  const double sign = config.metric.higher_is_better() ? -1.0 : 1.0;
  Decision d;
  d.kind = kind;
  d.value = value;
  d.at_iteration = seen;
  d.estimate = sign * e.score;
  d.interval_low = std::min(sign * e.low(), sign * e.high());
  d.interval_high = std::max(sign * e.low(), sign * e.high());
  d.iterations = e.iterations;
  d.reason = std::move(reason);
  return d;
}

ProbeEnd Tuner::State::probe_end(const ProbeEstimate& e) const {
  // Energy that never arrives must not stall the search: a probe ends on time alone after a while.
  if (probe->iterations() >= 3 * config.max_probe_iterations) return ProbeEnd::kCap;
  if (e.iterations < config.min_probe_iterations) return ProbeEnd::kNotYet;
  if (phase == Phase::kSearch && config.max_slowdown && e.mean_time_s - e.time_half_s > budget_time_s())
    return ProbeEnd::kOverBudget;
  // Near the budget's edge only more iterations tell whether this candidate may be held: there a step of the
  // knob is worth a few percent of the metric, so the edge gets up to twice the iterations of a probe.
  const bool at_edge = phase == Phase::kSearch && config.max_slowdown &&
                       std::abs(e.mean_time_s - budget_time_s()) <= e.time_half_s;
  if (e.iterations >= (at_edge ? 2 : 1) * config.max_probe_iterations) return ProbeEnd::kCap;
  if (at_edge) return ProbeEnd::kNotYet;
  if (e.score_half <= precision_at(e)) return ProbeEnd::kPrecise;
  // The baseline is the yardstick every candidate is divided by, the same for all: its own precision moves
  // every estimate alike and decides no comparison. Only the slowdown budget (a time relative to it) needs
  // it precise: to half the precision, as the time noise is half the energy's.
  if (phase == Phase::kBaseline && e.iterations >= 2 * config.min_probe_iterations &&
      (!config.max_slowdown || e.time_half_s <= e.mean_time_s * config.precision / 2))
    return ProbeEnd::kPrecise;
  if (phase == Phase::kSearch) {
    if (const auto best = search->best(); best && *best != current) {
      const ProbeEstimate& b = search->estimates().at(*best);
      // (Ending a probe that is clearly better as well was tried: it then rests on too few iterations to
      // be the yardstick of the next comparisons, and the regret doubled.)
      if (e.low() > b.high()) return ProbeEnd::kWorse;
    }
  }
  return ProbeEnd::kNotYet;
}

std::optional<Decision> Tuner::State::end_probe(const ProbeEstimate& e, ProbeEnd why) {
  std::string reason;
  if (phase == Phase::kBaseline) {
    ref = probe->reference();
    phase = Phase::kSearch;
    reason = fmt::format("start {:g} {}: {:.1f} ms, {:.2f} J per iteration", value(), unit, 1e3 * ref->time_s,
                         ref->energy_j);
  }
  // A probe that ended for another reason with its mean time over the budget is not held either: only its
  // interval kept it from being abandoned sooner.
  const bool over_budget = why == ProbeEnd::kOverBudget || (phase == Phase::kSearch && config.max_slowdown &&
                                                            e.mean_time_s > budget_time_s());
  if (e.iterations == 0) {
    search->record_unknown(current);
    reason = fmt::format("{:g} {}: no iteration with energy, skipped", value(), unit);
  } else if (over_budget) {
    search->record_infeasible(current);
    reason = fmt::format("{:g} {}: time +{:.1f}% over the {:.0f}% budget, abandoned", value(), unit,
                         100 * (e.mean_time_s / ref->time_s - 1), 100 * config.max_slowdown.value_or(0));
  } else {
    search->record(current, e);
    if (reason.empty())
      reason = fmt::format("{:g} {}: {}", value(), unit,
                           why == ProbeEnd::kWorse ? "clearly worse than the best"
                           : why == ProbeEnd::kCap ? "iteration cap"
                                                   : "precise enough");
  }
  if (e.iterations > 0) noise.add(e);
  if (const auto bump = search->check_unimodal())
    reason += fmt::format("; not unimodal (a bump at {:g} {}): coarse scan", grid[*bump], unit);

  if (const auto next = search->next()) {
    reason += fmt::format("; bracket [{:g}, {:g}] {}", grid[search->low()], grid[search->high()], unit);
    Decision d = decision(DecisionKind::kProbe, grid[*next], e, std::move(reason));
    hold(*next);
    return d;
  }
  // The search is over: hold the best. Iterations fed elsewhere during this search are its cost.
  const std::size_t best = search->choice().value_or(start_index);
  for (std::size_t i = 0; i < fed_at.size(); ++i)
    if (i != best) profiling += fed_at[i];
  reason += fmt::format("; settled at {:g} {}", grid[best], unit);
  Decision d = decision(DecisionKind::kSettle, grid[best], e, std::move(reason));
  phase = Phase::kSettled;
  settled_value = grid[best];
  hold(best);
  probe.reset();
  drift_reference.emplace(grid[best]);
  return d;
}

std::optional<Decision> Tuner::State::watch_drift(const IterationObservation& it) {
  if (drift_reference->iterations() < config.drift_window) {
    drift_reference->add(it.time_s, it.energy_j);
    return std::nullopt;
  }
  if (!drift_window) drift_window.emplace(value());
  drift_window->add(it.time_s, it.energy_j);
  if (drift_window->iterations() < config.drift_window) return std::nullopt;

  const Probe window = std::move(*drift_window);
  drift_window.reset();
  const auto shift = [&](const std::vector<double>& now, const std::vector<double>& before) -> double {
    if (now.size() < 2 || before.size() < 2) return 0;
    const double mean_now = analysis::summarize(now).mean;
    const double mean_before = analysis::summarize(before).mean;
    if (mean_before <= 0 || !analysis::welch_differs(now, before).value_or(false)) return 0;
    return mean_now / mean_before - 1;
  };
  const double time_shift = shift(window.times_s(), drift_reference->times_s());
  const double energy_shift = shift(window.energies_j(), drift_reference->energies_j());
  const bool time_moved = std::abs(time_shift) > config.drift_threshold;
  if (!time_moved && std::abs(energy_shift) <= config.drift_threshold) return std::nullopt;

  const std::string reason = time_moved ? fmt::format("drift: {:+.1f}% time", 100 * time_shift)
                                        : fmt::format("drift: {:+.1f}% energy", 100 * energy_shift);
  const ProbeEstimate e = window.estimate(config.metric, *ref, config.confidence).value_or(ProbeEstimate{});
  Decision d = decision(DecisionKind::kRetune, config.start_value, e, reason);
  start_search();
  return d;
}

Tuner::Tuner(TunerConfig config) : state_(std::make_unique<State>()) {
  validate(config);
  State& s = *state_;
  s.config = std::move(config);
  s.grid = candidate_grid(s.config);
  s.unit = s.config.knob == TuneKnob::kPowerLimit ? "W" : "MHz";
  s.start_index = static_cast<std::size_t>(
      std::find_if(s.grid.begin(), s.grid.end(),
                   [&](double v) { return std::abs(v - s.config.start_value) < 1e-9; }) -
      s.grid.begin());
  s.current = s.start_index;
  s.start_search();
  // The job's own first iterations are warm-up too (compilation, autotuning, caches).
  s.warmup_left = s.config.warmup_iterations;
}

Tuner::~Tuner() = default;
Tuner::Tuner(Tuner&&) noexcept = default;
Tuner& Tuner::operator=(Tuner&&) noexcept = default;

double Tuner::current_value() const {
  return state_->value();
}

std::optional<Decision> Tuner::observe(const IterationObservation& iteration) {
  State& s = *state_;
  ++s.seen;
  if (s.warmup_left > 0) {
    --s.warmup_left;
    if (s.phase != Phase::kSettled) ++s.fed_at[s.current];
    return std::nullopt;
  }
  if (s.phase == Phase::kSettled) {
    auto retune = s.watch_drift(iteration);
    if (retune) s.decisions.push_back(*retune);
    return retune;
  }
  ++s.fed_at[s.current];
  s.probe->add(iteration.time_s, iteration.energy_j);
  // The baseline is its own reference; every later probe is normalised to the baseline's.
  const auto ref = s.phase == Phase::kBaseline ? s.probe->reference() : s.ref;
  std::optional<ProbeEstimate> e;
  if (ref) e = s.probe->estimate(s.config.metric, *ref, s.config.confidence);
  if (e) e = s.noise.pooled(*e, s.config.confidence);
  if (!e) {
    // Time only so far: end on the cap alone, and skip the candidate (the baseline waits: without its
    // energy there is no reference, and a job whose iterations never carry energy is never tuned).
    if (s.probe->iterations() < 3 * s.config.max_probe_iterations || !s.ref) return std::nullopt;
    e = ProbeEstimate{};
  }
  const ProbeEnd why = s.probe_end(*e);
  if (why == ProbeEnd::kNotYet) return std::nullopt;
  auto decision = s.end_probe(*e, why);
  if (decision) s.decisions.push_back(*decision);
  return decision;
}

bool Tuner::settled() const {
  return state_->phase == Phase::kSettled;
}
std::optional<double> Tuner::settled_value() const {
  return state_->settled_value;
}
std::uint64_t Tuner::profiling_iterations() const {
  return state_->profiling;
}
std::uint64_t Tuner::iterations_seen() const {
  return state_->seen;
}
const std::vector<Decision>& Tuner::decisions() const {
  return state_->decisions;
}

}  // namespace wattwise::tune
