#pragma once

// The online tuner's contract: what `wattwise tune` (live, through markers) and the simulated tuner (virtual
// time) both drive. It only decides; it never touches a GPU. The caller holds the setting it names, feeds it
// the iterations measured at that setting, and applies a new setting (through the settings guard) when
// observe() says so. The same object decides on a real job and in the benchmark, so the benchmark's figures
// are the tool's.
//
// Vocabulary (docs/tune.md): a *candidate* is one value of the knob; *profiling iterations* are iterations
// spent at candidates other than the settled one before it settled; *warm-up* iterations right after a
// change are discarded (the GPU's clocks and power settle within ~1 s).
//
// Drift cannot fool it (docs/tune.md "Drift"): it waits at the start value until the iterations are
// stationary (that wait is not profiling: the job runs as it would untuned), measures the start value again
// after every candidate and compares each candidate with the start value measured next to it in time, and
// holds a candidate only when it beats the start value by more than the interval, twice: in the search and
// again, measured right after the start value, before it is held. Otherwise it holds the start value: "no
// setting beats the start value within the noise". A dry run is an A/A test: every candidate is the start.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.hpp"

namespace wattwise::tune {

enum class TuneKnob { kPowerLimit, kSmClock };

// What the tuner is asked to find.
struct TunerConfig {
  TuneKnob knob = TuneKnob::kPowerLimit;
  double min_value = 0;  // the knob's range (W or MHz), from the GPU's constraints
  double max_value = 0;
  double step = 5;         // the knob's resolution: candidates are min + k * step, and max
  double start_value = 0;  // the setting the job starts at (its captured value): the reference point
  analysis::MetricSpec metric{analysis::MetricKind::kEnergy, 0};
  std::optional<double> max_slowdown;  // 0.10: iteration time at most 10% above the start's
  // How closely the budget is kept (relative to the budget's time): a setting whose estimated time is within
  // budget * (1 + budget_tolerance) counts as within it. A probe's mean time is known to about +-0.4% (1%
  // noise per iteration, neighbours correlated by 0.4), and the best setting under a budget often lies
  // 0.1-0.3% inside it: judged at the point estimate, it is rejected nearly half the time for the next one
  // up, a step of 1-2% of energy (docs/tune.md "The search", step 6).
  double budget_tolerance = 0.0015;
  std::uint64_t warmup_iterations = 5;  // discarded after every change, or fewer: those that fill warmup_s of
  double warmup_s = 1.0;                // the job's time (a GPU settles within ~1 s; 0: iterations only)
  double confidence = 0.95;             // of the intervals behind every comparison (0.90 or 0.95)
  // How the search spends iterations (docs/tune.md "The search"). A probe ends as soon as one of these holds:
  // its metric's interval is within +-precision of its estimate, it is clearly worse than the best so far
  // (intervals apart), its time is over the slowdown budget by more than the noise, or it has its cap
  // (max_probe_iterations, or search_probe_iterations for a candidate without a budget); never before
  // min_probe_iterations (kept ones, after warm-up).
  double precision = 0.01;
  std::uint64_t min_probe_iterations = 5;
  std::uint64_t max_probe_iterations = 15;
  // Without a slowdown budget, a candidate's probe in the search ends at this many kept iterations instead
  // (the baseline and the confirmation keep max_probe_iterations). There the choice is the fit across the
  // candidates (docs/tune.md "The search", step 6), and at 15 iterations a probe's interval (about +-1.7% of
  // E, +-2.5% of EDP) still decides no comparison on a flat curve: fewer per probe leave iterations to spare
  // for more candidates near the optimum, which the fit pools (all four objectives gained on every seed set
  // measured; EDP alone is mixed off the tuning seeds: docs/tune.md step 4). Under a budget one candidate's
  // time decides the edge, and its probe keeps max_probe_iterations. At least min_probe_iterations; above
  // max_probe_iterations it is taken as max_probe_iterations.
  std::uint64_t search_probe_iterations = 11;
  // Drift while settled: windows of drift_window iterations whose mean time or energy moved by more than
  // drift_threshold (relative) from the first window after settling, and by more than the noise (Welch),
  // start the search again.
  std::uint64_t drift_window = 30;
  double drift_threshold = 0.05;
  // Before the baseline: the iterations at the start value are stationary when, over the last
  // stationary_window_s (and at least 30 iterations), neither energy nor time per iteration trends by more
  // than the noise or by more than 0.5%, in two tests half a window apart. Waits at most
  // max_stationary_wait_s, then goes on saying so.
  double stationary_window_s = 30;
  double max_stationary_wait_s = 600;
  // The start value is measured again between candidates whenever start_check_interval_s passed since its
  // last measurement (and before the search ends), for start_check_iterations kept iterations; its
  // measurements tell its level at a candidate's time through a Gaussian kernel start_bandwidth_s wide.
  double start_check_interval_s = 30;
  std::uint64_t start_check_iterations = 8;
  double start_bandwidth_s = 30;
  // Once the bracket is down to its last candidates, the search measures more candidates around the fitted
  // optimum while the iterations spent, one such probe, the confirmation and a measurement of the start
  // value stay within this many profiling iterations (0: none).
  std::uint64_t profiling_budget = 200;
};

// Every value of the knob the tuner may apply: min + k * step below max, and max itself, lowest first. The
// caller checks these against a policy before the job starts (cli/tune_command.cpp).
std::vector<double> knob_values(const TunerConfig& c);
// The tuner's candidates: knob_values and the start value (known once the job's GPUs are read), lowest first.
std::vector<double> candidate_grid(const TunerConfig& c);

// One iteration measured at the setting the tuner holds now. Energy may be missing (a window the sampler
// cannot resolve yet): such an iteration counts for time only.
struct IterationObservation {
  double time_s = 0;
  std::optional<double> energy_j;
};

// Why the setting changes (or does not).
enum class DecisionKind {
  kProbe,   // try another candidate
  kSettle,  // hold this setting: the search ended
  kRetune,  // drift seen while settled: the search starts again
};

// One entry of the decision trace (DB, JSON, HTML report).
struct Decision {
  DecisionKind kind = DecisionKind::kProbe;
  double value = 0;                // the setting to hold from now on
  std::uint64_t at_iteration = 0;  // the job's iteration count when decided
  // The estimate behind the decision (metric value normalised to the start's, and its confidence interval),
  // with how many iterations it rests on, and the setting it is of: the setting just measured, except after
  // a re-measurement of the start value, whose decision rests on the candidate measured before it, judged
  // against the start value measured on both sides (and the baseline's, which is the start value's own).
  double estimate_of = 0;
  double estimate = 0;
  double interval_low = 0;
  double interval_high = 0;
  std::uint64_t iterations = 0;
  std::string reason;  // one line for people: "bracket [200, 260] W", "drift: +8% time"
};

class Tuner {
 public:
  explicit Tuner(TunerConfig config);  // usage_error for an empty or inverted range
  ~Tuner();
  Tuner(Tuner&&) noexcept;
  Tuner& operator=(Tuner&&) noexcept;

  // The setting to hold now (the start value before the first decision).
  double current_value() const;
  // Feeds one iteration measured at current_value(); returns a decision when the setting should change
  // (kProbe, kRetune) or the search ends (kSettle). The caller applies decision->value before the next
  // iteration it feeds.
  std::optional<Decision> observe(const IterationObservation& iteration);

  // settled(): holding a settled setting now (false while searching, also after a retune).
  // settled_value(): the setting it settled on last (absent before the first settle).
  bool settled() const;
  std::optional<double> settled_value() const;
  // Iterations fed at values other than the settled one before it settled (the figure of merit);
  // while a search goes on, every iteration it was fed so far (the stationarity wait aside).
  std::uint64_t profiling_iterations() const;
  // Iterations fed at the start value while waiting for them to be stationary (not profiling), over all
  // searches.
  std::uint64_t stationary_wait_iterations() const;
  // Whether the last settle held the start value because no candidate beat it beyond the noise.
  bool held_start() const;
  std::uint64_t iterations_seen() const;
  const std::vector<Decision>& decisions() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace wattwise::tune
