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
  kWarming,       // at the start value, until its iterations are stationary (not profiling)
  kBaseline,      // measuring the start value: the reference the metric is normalised to
  kSearch,        // measuring a candidate
  kStartCheck,    // measuring the start value again, right after a candidate
  kConfirm,       // measuring the chosen candidate again, right after the start value
  kConfirmCheck,  // ... and the start value after it, when the two came out close
  kSettled,
};

// A stationarity test needs at least this many iterations in its window.
constexpr std::size_t kStationaryMinIterations = 30;
// A confirmation that beats the start value by less than this (relative) is checked against the start value
// measured after it too: the start's level extrapolated over the confirmation may have drifted that much.
constexpr double kConfirmDriftAllowance = 0.02;
// A trend smaller than this over the window is stationary enough, whatever the noise says.
constexpr double kStationaryChange = 0.005;

// One measurement of the start value: when (the middle of its kept iterations, on the job's clock), how many
// iterations, and their means.
struct StartMeasurement {
  double at_s = 0;
  double iterations = 0;
  double energy_j = 0;
  double time_s = 0;
};

// The start value's level at time `at_s` (its energy and time per iteration), from its measurements: a local
// linear fit in time, each measurement weighted by its iterations and a Gaussian kernel of width
// `bandwidth_s` around `at_s`, so that the measurements next to it in time count most and a slow drift
// between them is followed. `iterations`: what the level is worth in iterations of the start (the inverse of
// the sum of its coefficients' squares over the measurements' iterations), for its interval.
struct StartLevel {
  analysis::ReferencePoint ref;
  double iterations = 0;
};

std::optional<StartLevel> start_level(const std::vector<StartMeasurement>& ms, double at_s,
                                      double bandwidth_s) {
  if (ms.empty()) return std::nullopt;
  std::vector<double> w(ms.size());
  double sw = 0, st = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double z = (ms[i].at_s - at_s) / bandwidth_s;
    w[i] = ms[i].iterations * std::exp(-0.5 * z * z);
    sw += w[i];
    st += w[i] * ms[i].at_s;
  }
  if (!(sw > 0)) return std::nullopt;
  const double mean_t = st / sw;
  double stt = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) stt += w[i] * (ms[i].at_s - mean_t) * (ms[i].at_s - mean_t);
  // A line needs two measurements apart in time; with one (or all at once) the level is their mean.
  const bool line = ms.size() >= 2 && stt > 1e-9 * sw;
  StartLevel level;
  double variance = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double c = w[i] * (1 / sw + (line ? (at_s - mean_t) * (ms[i].at_s - mean_t) / stt : 0));
    level.ref.energy_j += c * ms[i].energy_j;
    level.ref.time_s += c * ms[i].time_s;
    variance += c * c / ms[i].iterations;
  }
  level.iterations = variance > 0 ? 1 / variance : 0;
  if (!(level.ref.energy_j > 0) || !(level.ref.time_s > 0)) return std::nullopt;
  return level;
}

// Relative trend over a window, from a least-squares line, and whether it is beyond the noise (its t
// statistic, with the residuals' lag-1 correlation widening the slope's error as for a mean).
struct Trend {
  double change = 0;  // over the window, relative to the mean
  bool significant = false;
};

Trend trend(const std::vector<double>& t, const std::vector<double>& v) {
  const std::size_t n = t.size();
  double mt = 0, mv = 0;
  for (std::size_t i = 0; i < n; ++i) mt += t[i], mv += v[i];
  mt /= static_cast<double>(n), mv /= static_cast<double>(n);
  double stt = 0, stv = 0;
  for (std::size_t i = 0; i < n; ++i) stt += (t[i] - mt) * (t[i] - mt), stv += (t[i] - mt) * (v[i] - mv);
  if (!(stt > 0) || !(mv > 0)) return {};
  const double slope = stv / stt;
  double ss = 0, lag = 0, previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = v[i] - mv - slope * (t[i] - mt);
    ss += r * r;
    if (i > 0) lag += r * previous;
    previous = r;
  }
  const double df = static_cast<double>(n) - 2;
  const double rho = ss > 0 ? std::clamp(lag / ss, 0.0, 0.9) : 0;
  const double se = std::sqrt(ss / df / stt) * std::sqrt((1 + rho) / (1 - rho));
  Trend tr;
  tr.change = slope * (t.back() - t.front()) / mv;
  tr.significant = se > 0 ? std::abs(slope) / se > analysis::t_quantile_975(df) : slope != 0;
  return tr;
}

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
  if (!finite(c.stationary_window_s) || c.stationary_window_s <= 0 || !finite(c.max_stationary_wait_s) ||
      c.max_stationary_wait_s < 0)
    throw usage_error("tune: --stationary-window must be a positive number of seconds, e.g. 30");
  if (c.start_check_iterations < 2 || !finite(c.start_bandwidth_s) || c.start_bandwidth_s <= 0 ||
      !finite(c.start_check_interval_s) || c.start_check_interval_s < 0)
    throw usage_error(
        "tune: a measurement of the start value needs at least 2 iterations and a positive "
        "bandwidth");
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

  Phase phase = Phase::kWarming;
  std::size_t current = 0;  // grid index held now
  std::uint64_t warmup_left = 0;
  std::optional<Probe> probe;                   // the iterations kept at the current setting
  double probe_began_s = 0;                     // the job's clock at the probe's first kept iteration
  std::optional<analysis::ReferencePoint> ref;  // the baseline: what every estimate is normalised to
  std::optional<Search> search;
  NoisePool noise;                    // of the probes ended in this search
  std::vector<std::uint64_t> fed_at;  // iterations fed at each candidate during this search

  double clock_s = 0;  // the job's time: the sum of the fed iterations' times
  // Waiting for stationary iterations: the kept ones' times (middle), energies and durations.
  std::vector<double> warm_at_s, warm_energy_j, warm_time_s;
  double warm_began_s = 0;
  double next_test_s = 0;
  int passes = 0;                   // consecutive stationarity tests passed
  std::uint64_t waited = 0;         // over all searches
  std::uint64_t waited_before = 0;  // ... before this one
  std::string stationary_note;      // how the wait ended, for the baseline's decision
  std::uint64_t waited_now() const { return waited - waited_before; }
  // The start value's measurements in this search (the baseline, then one after every candidate), and the
  // candidate measured last, waiting for the start value measured after it.
  std::vector<StartMeasurement> starts;
  // The candidates measured since the start value was last measured: their estimates are provisional (the
  // start's level at their time extrapolated) until the start value is measured after them.
  struct Measured {
    std::size_t index = 0;
    Probe probe{0};
    double at_s = 0;
  };
  std::vector<Measured> since_start;
  double last_start_s = 0;  // when the start value was last measured (the end of that measurement)
  bool finishing = false;   // the search is over: one more measurement of the start value, then the end
  std::optional<std::size_t> confirming;
  std::optional<Measured> confirmation;  // the chosen candidate's second measurement, awaiting the start's

  // While settled: the first window after settling, and the window being filled.
  std::optional<Probe> drift_reference;
  std::optional<Probe> drift_window;

  std::uint64_t seen = 0;
  std::uint64_t profiling = 0;
  std::optional<double> settled_value;
  bool held_start = false;
  std::vector<Decision> decisions;

  double value() const { return grid[current]; }
  bool searching() const { return phase == Phase::kSearch || phase == Phase::kConfirm; }
  // The start value's level now (what a candidate measured now is compared with), else the baseline.
  analysis::ReferencePoint level_at(double at_s) const {
    const auto level = start_level(starts, at_s, config.start_bandwidth_s);
    return level ? level->ref : *ref;
  }
  double budget_time_s() const { return (1 + config.max_slowdown.value_or(0)) * level_at(clock_s).time_s; }
  // The start value's own score (lower is better), against any reference: 1 for the ratio metrics.
  double start_score(const analysis::ReferencePoint& r) const {
    const double sign = config.metric.higher_is_better() ? -1.0 : 1.0;
    return sign * analysis::metric_value(config.metric, r.energy_j, r.time_s, r);
  }
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
    phase = Phase::kWarming;
    ref.reset();
    search.emplace(grid.size());
    noise = NoisePool{};
    fed_at.assign(grid.size(), 0);
    drift_reference.reset();
    drift_window.reset();
    warm_at_s.clear(), warm_energy_j.clear(), warm_time_s.clear();
    warm_began_s = clock_s;
    waited_before = waited;
    next_test_s = 0;
    passes = 0;
    starts.clear();
    since_start.clear();
    finishing = false;
    confirming.reset();
    confirmation.reset();
    hold(start_index);
  }

  // An estimate of the probe `p` measured around `at_s`, against the start value's level then, with its
  // interval from the pooled noise of both.
  std::optional<ProbeEstimate> against_start(const Probe& p, double at_s) const;
  std::optional<Decision> observe_warming(const IterationObservation& it);
  ProbeEnd probe_end(const ProbeEstimate& e) const;
  std::optional<Decision> end_baseline(const ProbeEstimate& e, ProbeEnd why);
  std::optional<Decision> end_candidate(const ProbeEstimate& e, ProbeEnd why);
  std::optional<Decision> end_start_check(const ProbeEstimate& e);
  std::optional<Decision> measure_start(const ProbeEstimate& e, std::string reason);
  // The probe just ended at the start value joins its measurements (and the noise pool).
  void keep_start_measurement(const ProbeEstimate& e) {
    const auto r = probe->reference();
    if (!r) return;
    starts.push_back({(probe_began_s + clock_s) / 2, static_cast<double>(probe->energy_iterations()),
                      r->energy_j, r->time_s});
    noise.add(e);
  }
  std::optional<Decision> next_or_finish(const ProbeEstimate& e, std::string reason);
  std::optional<Decision> end_confirm(const ProbeEstimate& e);
  std::optional<Decision> end_confirm_check(const ProbeEstimate& e);
  Decision settle(std::size_t index, const ProbeEstimate& e, std::string reason);
  // The choice did not beat the start value measured beside it: the start value is held. `measured` names
  // how the choice was compared ("{} again" ... "of the start value measured just before").
  Decision settle_on_start(const std::optional<ProbeEstimate>& e, const std::string& choice,
                           const std::string& measured);
  std::optional<Decision> watch_drift(const IterationObservation& it);
  Decision decision(DecisionKind kind, double value, const ProbeEstimate& e, std::string reason) const;
  std::string value_text(std::size_t index) const { return fmt::format("{:g} {}", grid[index], unit); }
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

std::optional<ProbeEstimate> Tuner::State::against_start(const Probe& p, double at_s) const {
  const auto level = start_level(starts, at_s, config.start_bandwidth_s);
  const analysis::ReferencePoint r = level ? level->ref : *ref;
  auto e = p.estimate(config.metric, r, config.confidence);
  if (!e) return e;
  // The start's level is an estimate too: its noise widens the comparison's interval.
  return noise.pooled(*e, config.confidence, level ? level->iterations : 0);
}

std::optional<Decision> Tuner::State::observe_warming(const IterationObservation& it) {
  if (!it.energy_j) return std::nullopt;
  warm_at_s.push_back(clock_s - it.time_s / 2);
  warm_energy_j.push_back(*it.energy_j);
  warm_time_s.push_back(it.time_s);
  const double waited_s = clock_s - warm_began_s;
  const bool too_long = waited_s >= config.max_stationary_wait_s;
  if (!too_long && (warm_at_s.size() < kStationaryMinIterations || waited_s < config.stationary_window_s ||
                    clock_s < next_test_s))
    return std::nullopt;
  bool stationary = too_long;
  if (!too_long) {
    // The last window (at least kStationaryMinIterations iterations).
    std::size_t first = warm_at_s.size() - kStationaryMinIterations;
    while (first > 0 && clock_s - warm_at_s[first - 1] <= config.stationary_window_s) --first;
    const std::vector<double> t(warm_at_s.begin() + static_cast<long>(first), warm_at_s.end());
    const auto flat = [&](const std::vector<double>& values) {
      const std::vector<double> v(values.begin() + static_cast<long>(first), values.end());
      const Trend tr = trend(t, v);
      return !tr.significant || std::abs(tr.change) <= kStationaryChange;
    };
    passes = flat(warm_energy_j) && flat(warm_time_s) ? passes + 1 : 0;
    next_test_s = clock_s + config.stationary_window_s / 2;
    stationary = passes >= 2;
  }
  if (!stationary) return std::nullopt;
  // The baseline starts now, at the same setting: no change, no warm-up. Its decision says how long this
  // took.
  phase = Phase::kBaseline;
  probe.emplace(value());
  stationary_note =
      too_long ? fmt::format("not stationary after {:.0f} s ({} iterations waited), measured anyway",
                             waited_s, waited_now())
               : fmt::format("stationary after {:.0f} s ({} iterations waited)", waited_s, waited_now());
  return std::nullopt;
}

ProbeEnd Tuner::State::probe_end(const ProbeEstimate& e) const {
  // Energy that never arrives must not stall the search: a probe ends on time alone after a while.
  if (probe->iterations() >= 3 * config.max_probe_iterations) return ProbeEnd::kCap;
  if (phase == Phase::kStartCheck || phase == Phase::kConfirmCheck)
    return probe->energy_iterations() >= config.start_check_iterations ? ProbeEnd::kPrecise
                                                                       : ProbeEnd::kNotYet;
  if (e.iterations < config.min_probe_iterations) return ProbeEnd::kNotYet;
  if (searching() && config.max_slowdown && e.mean_time_s - e.time_half_s > budget_time_s())
    return ProbeEnd::kOverBudget;
  if (phase == Phase::kConfirm) {
    // Until it is clear on which side of the start value it lies, or the cap.
    const double start = start_score(level_at(clock_s));
    if (e.high() < start || e.low() > start) return ProbeEnd::kPrecise;
    return e.iterations >= config.max_probe_iterations ? ProbeEnd::kCap : ProbeEnd::kNotYet;
  }
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

std::optional<Decision> Tuner::State::end_baseline(const ProbeEstimate& e, ProbeEnd) {
  ref = probe->reference();
  if (!ref) return std::nullopt;
  keep_start_measurement(e);
  search->record(start_index, e);
  last_start_s = clock_s;
  std::string reason = fmt::format("start {}: {}; {:.1f} ms, {:.2f} J per iteration", value_text(start_index),
                                   stationary_note, 1e3 * ref->time_s, ref->energy_j);
  phase = Phase::kSearch;
  return next_or_finish(e, std::move(reason));
}

std::optional<Decision> Tuner::State::end_candidate(const ProbeEstimate& e, ProbeEnd why) {
  // A probe that ended for another reason with its mean time over the budget is not held either: only its
  // interval kept it from being abandoned sooner.
  const bool over_budget = why == ProbeEnd::kOverBudget ||
                           (config.max_slowdown && e.iterations > 0 && e.mean_time_s > budget_time_s());
  const double at_s = (probe_began_s + clock_s) / 2;
  std::string reason;
  if (e.iterations == 0) {
    search->record_unknown(current);
    reason = fmt::format("{}: no iteration with energy, skipped", value_text(current));
  } else if (over_budget) {
    search->record_infeasible(current);
    reason = fmt::format("{}: time +{:.1f}% over the {:.0f}% budget, abandoned", value_text(current),
                         100 * (e.mean_time_s / level_at(clock_s).time_s - 1),
                         100 * config.max_slowdown.value_or(0));
  } else {
    // Against the start value's level at its time, as far as the start's measurements tell it now; again
    // once the start value is measured after it.
    search->record(current, e);
    since_start.push_back({current, *probe, at_s});
    reason = fmt::format("{}: {}", value_text(current),
                         why == ProbeEnd::kWorse ? "clearly worse than the best"
                         : why == ProbeEnd::kCap ? "iteration cap"
                                                 : "precise enough");
  }
  if (e.iterations > 0)
    if (const auto own = probe->estimate(config.metric, level_at(at_s), config.confidence)) noise.add(*own);
  if (clock_s - last_start_s >= config.start_check_interval_s) return measure_start(e, std::move(reason));
  return next_or_finish(e, std::move(reason));
}

std::optional<Decision> Tuner::State::measure_start(const ProbeEstimate& e, std::string reason) {
  reason += "; the start value again, to compare with it";
  Decision d = decision(DecisionKind::kProbe, grid[start_index], e, std::move(reason));
  phase = Phase::kStartCheck;
  hold(start_index);
  return d;
}

std::optional<Decision> Tuner::State::end_start_check(const ProbeEstimate& e) {
  keep_start_measurement(e);
  last_start_s = clock_s;
  std::string reason = fmt::format("start {} again: {:.3f} of its baseline energy", value_text(start_index),
                                   starts.back().energy_j / ref->energy_j);
  // The candidates measured since the start value was measured before are compared with its level at their
  // time again, now that it is known on both sides of them.
  ProbeEstimate shown = e;
  for (const Measured& m : since_start) {
    if (search->infeasible(m.index) || !search->estimates().contains(m.index)) continue;
    if (const auto again = against_start(m.probe, m.at_s)) {
      search->record(m.index, *again);
      shown = *again;
      reason += fmt::format("; {}: {:.3f} [{:.3f}, {:.3f}]", value_text(m.index), again->score, again->low(),
                            again->high());
    }
  }
  since_start.clear();
  phase = Phase::kSearch;
  return next_or_finish(shown, std::move(reason));
}

std::optional<Decision> Tuner::State::next_or_finish(const ProbeEstimate& e, std::string reason) {
  if (const auto bump = search->check_unimodal())
    reason += fmt::format("; not unimodal (a bump at {}): coarse scan", value_text(*bump));
  if (const auto next = search->next()) {
    reason += fmt::format("; bracket [{:g}, {:g}] {}", grid[search->low()], grid[search->high()], unit);
    Decision d = decision(DecisionKind::kProbe, grid[*next], e, std::move(reason));
    hold(*next);
    return d;
  }
  // The search is over. Its choice is held only if it beats the start value beyond the noise, here and once
  // more when measured again right after the start value: measured now, if candidates came after it.
  if (!since_start.empty() && clock_s - last_start_s >= config.start_check_interval_s / 2)
    return measure_start(e, std::move(reason));
  const auto choice = search->choice();
  const double start = start_score(level_at(clock_s));
  const auto measured = choice ? search->estimates().find(*choice) : search->estimates().end();
  const bool beats = choice && *choice != start_index &&
                     (measured == search->estimates().end() || measured->second.high() < start);
  if (!beats) {
    reason += choice && *choice != start_index
                  ? fmt::format("; best {} ({:.3f} [{:.3f}, {:.3f}] of the start)", value_text(*choice),
                                measured->second.score, measured->second.low(), measured->second.high())
                  : "";
    reason += "; no setting beats the start value within the noise";
    held_start = true;
    return settle(start_index, e, std::move(reason));
  }
  reason +=
      fmt::format("; {} beats the start value: confirming it next to the start value", value_text(*choice));
  confirming = *choice;
  Decision d = decision(DecisionKind::kProbe, grid[*choice], e, std::move(reason));
  phase = Phase::kConfirm;
  hold(*choice);
  return d;
}

std::optional<Decision> Tuner::State::end_confirm(const ProbeEstimate&) {
  const std::size_t chosen = *confirming;
  confirming.reset();
  const double at_s = (probe_began_s + clock_s) / 2;
  const auto e = against_start(*probe, at_s);
  const double start = start_score(level_at(at_s));
  // Over the budget only if clearly so: the search found its time within the budget, and a candidate at the
  // budget's edge (where the best one under a budget sits) is as likely to measure a little over as under.
  const bool over_budget =
      e && config.max_slowdown &&
      e->mean_time_s - e->time_half_s > (1 + *config.max_slowdown) * level_at(at_s).time_s;
  if (e && !over_budget && e->high() < start - kConfirmDriftAllowance * std::abs(start)) {
    held_start = false;
    return settle(chosen, *e,
                  fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just before: "
                              "confirmed",
                              value_text(chosen), e->score, e->low(), e->high()));
  }
  if (e && !over_budget && e->high() < start) {
    // Close to the start value: measured once more after it, so that the start's level at its time is
    // known from both sides rather than extrapolated.
    confirmation = Measured{chosen, *probe, at_s};
    Decision d =
        decision(DecisionKind::kProbe, grid[start_index], *e,
                 fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just before, "
                             "close to it: the start value once more, after it",
                             value_text(chosen), e->score, e->low(), e->high()));
    phase = Phase::kConfirmCheck;
    hold(start_index);
    return d;
  }
  if (over_budget && e->high() < start) {
    // It beats the start value but its time is now clearly over the budget: the budget's edge lies above it.
    // The next choice within the budget is confirmed in its place; holding the start value would give up
    // what every setting between them was measured to save.
    search->record_infeasible(chosen);
    const auto next = search->choice();
    const auto measured = next ? search->estimates().find(*next) : search->estimates().end();
    if (next && *next != start_index &&
        (measured == search->estimates().end() || measured->second.high() < start)) {
      confirming = *next;
      Decision d =
          decision(DecisionKind::kProbe, grid[*next], *e,
                   fmt::format("{} again: {:.3f} [{:.3f}, {:.3f}] of the start value measured just "
                               "before, over the budget: {} is confirmed next to the start value instead",
                               value_text(chosen), e->score, e->low(), e->high(), value_text(*next)));
      hold(*next);
      return d;
    }
  }
  return settle_on_start(e, value_text(chosen) + " again",
                         over_budget ? "measured just before, over the budget" : "measured just before");
}

std::optional<Decision> Tuner::State::end_confirm_check(const ProbeEstimate& e) {
  keep_start_measurement(e);
  const Measured c = std::move(*confirmation);
  confirmation.reset();
  const auto again = against_start(c.probe, c.at_s);
  const double start = start_score(level_at(c.at_s));
  if (again && again->high() < start) {
    held_start = false;
    return settle(c.index, *again,
                  fmt::format("{}: {:.3f} [{:.3f}, {:.3f}] of the start value measured before and after it: "
                              "confirmed",
                              value_text(c.index), again->score, again->low(), again->high()));
  }
  return settle_on_start(again, value_text(c.index), "measured before and after it");
}

Decision Tuner::State::settle_on_start(const std::optional<ProbeEstimate>& e, const std::string& choice,
                                       const std::string& measured) {
  held_start = true;
  const ProbeEstimate shown = e.value_or(ProbeEstimate{});
  return settle(start_index, shown,
                fmt::format("{}: {:.3f} [{:.3f}, {:.3f}] of the start value {}: not confirmed; no setting "
                            "beats the start value within the noise",
                            choice, shown.score, shown.low(), shown.high(), measured));
}

Decision Tuner::State::settle(std::size_t index, const ProbeEstimate& e, std::string reason) {
  // Iterations fed elsewhere during this search are its cost.
  for (std::size_t i = 0; i < fed_at.size(); ++i)
    if (i != index) profiling += fed_at[i];
  reason += fmt::format("; settled at {}", value_text(index));
  Decision d = decision(DecisionKind::kSettle, grid[index], e, std::move(reason));
  phase = Phase::kSettled;
  settled_value = grid[index];
  hold(index);
  probe.reset();
  drift_reference.emplace(grid[index]);
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
  if (std::isfinite(iteration.time_s) && iteration.time_s > 0) s.clock_s += iteration.time_s;
  if (s.warmup_left > 0) {
    --s.warmup_left;
    if (s.phase == Phase::kWarming)
      ++s.waited;
    else if (s.phase != Phase::kSettled)
      ++s.fed_at[s.current];
    return std::nullopt;
  }
  if (s.phase == Phase::kSettled) {
    auto retune = s.watch_drift(iteration);
    if (retune) s.decisions.push_back(*retune);
    return retune;
  }
  if (s.phase == Phase::kWarming) {
    ++s.waited;
    return s.observe_warming(iteration);
  }
  ++s.fed_at[s.current];
  if (s.probe->iterations() == 0) s.probe_began_s = s.clock_s - iteration.time_s;
  s.probe->add(iteration.time_s, iteration.energy_j);
  // The baseline is its own reference; every later probe is compared with the start value's level then.
  std::optional<ProbeEstimate> e;
  if (s.phase == Phase::kBaseline || s.phase == Phase::kStartCheck || s.phase == Phase::kConfirmCheck) {
    if (const auto own = s.probe->reference())
      e = s.probe->estimate(s.config.metric, *own, s.config.confidence);
    if (e) e = s.noise.pooled(*e, s.config.confidence);
  } else if (s.ref) {
    e = s.against_start(*s.probe, s.clock_s);
  }
  if (!e) {
    // Time only so far: end on the cap alone, and skip the candidate (the baseline waits: without its
    // energy there is no reference, and a job whose iterations never carry energy is never tuned).
    if (s.probe->iterations() < 3 * s.config.max_probe_iterations || !s.ref) return std::nullopt;
    e = ProbeEstimate{};
  }
  const ProbeEnd why = s.probe_end(*e);
  if (why == ProbeEnd::kNotYet) return std::nullopt;
  std::optional<Decision> decision;
  switch (s.phase) {
    case Phase::kBaseline:
      decision = s.end_baseline(*e, why);
      break;
    case Phase::kSearch:
      decision = s.end_candidate(*e, why);
      break;
    case Phase::kStartCheck:
      decision = s.end_start_check(*e);
      break;
    case Phase::kConfirm:
      decision = s.end_confirm(*e);
      break;
    case Phase::kConfirmCheck:
      decision = s.end_confirm_check(*e);
      break;
    case Phase::kWarming:
    case Phase::kSettled:
      break;
  }
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
  // A search still going has spent all its iterations so far searching.
  std::uint64_t ongoing = 0;
  if (state_->phase != Phase::kSettled)
    for (const std::uint64_t n : state_->fed_at) ongoing += n;
  return state_->profiling + ongoing;
}
std::uint64_t Tuner::stationary_wait_iterations() const {
  return state_->waited;
}
bool Tuner::held_start() const {
  return state_->held_start;
}
std::uint64_t Tuner::iterations_seen() const {
  return state_->seen;
}
const std::vector<Decision>& Tuner::decisions() const {
  return state_->decisions;
}

}  // namespace wattwise::tune
