#pragma once

// The tuner's inside, shared by its rooms (not part of the tune library's interface): tuner.cpp (the
// contract, the stationarity wait, the end of a probe, the drift watch), tuner_search.cpp (the search and the
// start value's re-measurements), tuner_confirm.cpp (the confirmation and the settle) and
// tuner_statistics.cpp (the start value's level in time, the trend of a window).

#include <fmt/format.h>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.hpp"
#include "tune/probe.hpp"
#include "tune/search.hpp"
#include "tune/tuner.hpp"

namespace wattwise::tune {

namespace tuner_detail {

enum class Phase {
  kWarming,       // at the start value, until its iterations are stationary (not profiling)
  kBaseline,      // measuring the start value: the reference the metric is normalised to
  kSearch,        // measuring a candidate
  kStartCheck,    // measuring the start value again, right after a candidate
  kConfirm,       // measuring the chosen candidate again, right after the start value
  kConfirmCheck,  // ... and the start value after it, when the two came out close
  kSettled,
};

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
std::optional<StartLevel> start_level(const std::vector<StartMeasurement>& ms, double at_s, double bandwidth_s);

// Relative trend over a window, from a least-squares line, and whether it is beyond the noise (its t
// statistic, with the residuals' lag-1 correlation widening the slope's error as for a mean).
struct Trend {
  double change = 0;  // over the window, relative to the mean
  bool significant = false;
};

Trend trend(const std::vector<double>& t, const std::vector<double>& v);

// y = a + b (x - mean_x), fitted by weighted least squares (absent without two distinct x).
struct Line {
  double mean_x = 0;
  double a = 0;
  double b = 0;
  double operator()(double x) const { return a + b * (x - mean_x); }
};
std::optional<Line> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                             const std::vector<double>& w);

// One probe's mean time at a candidate, when and on how many iterations: the fit of time across the
// candidates that decides the slowdown budget's edge.
struct TimedProbe {
  std::size_t index = 0;
  double at_s = 0;
  double time_s = 0;
  double iterations = 0;
};

// Why a probe ended, for the trace.
enum class ProbeEnd { kNotYet, kPrecise, kWorse, kOverBudget, kCap };

}  // namespace tuner_detail

using tuner_detail::Phase;
using tuner_detail::ProbeEnd;
using tuner_detail::start_level;
using tuner_detail::StartMeasurement;
using tuner_detail::TimedProbe;

struct Tuner::State {
  TunerConfig config;
  std::vector<double> grid;
  std::size_t start_index = 0;
  std::string unit;

  Phase phase = Phase::kWarming;
  std::size_t current = 0;  // grid index held now
  std::uint64_t warmup_left = 0;
  double changed_at_s = -1;  // the job's clock at the last change of setting (-1: the job's own start)
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
  std::vector<TimedProbe> timed;  // every probe at a candidate other than the start in this search
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
  // Iterations fed during this search so far (warm-up included), the most it may count as profiling.
  std::uint64_t searched() const {
    std::uint64_t n = 0;
    for (const std::uint64_t f : fed_at) n += f;
    return n;
  }
  // The most kept iterations a candidate's probe in the search gets (before the budget's edge doubles it).
  std::uint64_t probe_cap() const {
    return config.max_slowdown ? config.max_probe_iterations
                               : std::min(config.search_probe_iterations, config.max_probe_iterations);
  }
  // A measurement of the start value between candidates, its warm-up included.
  std::uint64_t start_check_cost() const { return config.start_check_iterations + config.warmup_iterations; }
  bool searching() const { return phase == Phase::kSearch || phase == Phase::kConfirm; }
  // The start value's level now (what a candidate measured now is compared with), else the baseline.
  analysis::ReferencePoint level_at(double at_s) const {
    const auto level = start_level(starts, at_s, config.start_bandwidth_s);
    return level ? level->ref : *ref;
  }
  // The start value's time per iteration, for the slowdown budget: every iteration at the start value since
  // its iterations were stationary (the wait's last window, the baseline, every re-measurement) pooled. The
  // budget is a time relative to it: what the start's level at one moment (a few iterations) adds in noise
  // moves every candidate's time alike, and a budget's edge 0.3% away is lost in it.
  double start_time_s() const {
    double sum = 0, n = 0;
    for (const StartMeasurement& m : starts) sum += m.time_s * m.iterations, n += m.iterations;
    return n > 0 ? sum / n : ref->time_s;
  }
  double budget_time_s() const { return (1 + config.max_slowdown.value_or(0)) * start_time_s(); }
  // The time a setting's estimate is judged against: the budget kept to within budget_tolerance; and the same
  // as a ratio to the start value's time, for the fit of time across the candidates (budget_edge()).
  double judged_budget_time_s() const { return (1 + config.budget_tolerance) * budget_time_s(); }
  double judged_budget_ratio() const {
    return (1 + config.max_slowdown.value_or(0)) * (1 + config.budget_tolerance);
  }
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
    if (index != current) warmup_left = config.warmup_iterations, changed_at_s = clock_s;
    current = index;
    probe.emplace(grid[index]);
  }

  void start_search() {
    phase = Phase::kWarming;
    ref.reset();
    search.emplace(grid);
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
    timed.clear();
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
  // With a budget and no budget_edge(): the candidates whose own mean time is over the judged budget are
  // ruled out, with every lower (slower) setting, before the search's choice.
  void rule_out_over_budget_without_edge();
  // The lowest candidate whose time, fitted by a line across the candidates measured near the budget's
  // edge (each against the start value's level at its time), is within the budget; absent without a
  // budget or when the measurements do not straddle its edge.
  std::optional<std::size_t> budget_edge() const;
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
  Decision settle_on_start(const ProbeEstimate& e, const std::string& choice, const std::string& measured);
  std::optional<Decision> watch_drift(const IterationObservation& it);
  Decision decision(DecisionKind kind, double value, const ProbeEstimate& e, std::string reason) const;
  // A probe's slowdown against the start value's pooled time, with its interval: "time +9.9% [+9.1%, +10.7%]"
  // (empty without a budget, which is the only place the time decides).
  std::string slowdown_text(const ProbeEstimate& e) const {
    if (!config.max_slowdown || e.iterations == 0) return {};
    const double start = start_time_s();
    return fmt::format(", time {:+.1f}% [{:+.1f}%, {:+.1f}%]", 100 * (e.mean_time_s / start - 1),
                       100 * ((e.mean_time_s - e.time_half_s) / start - 1),
                       100 * ((e.mean_time_s + e.time_half_s) / start - 1));
  }
  std::string value_text(std::size_t index) const { return fmt::format("{:g} {}", grid[index], unit); }
};

}  // namespace wattwise::tune
