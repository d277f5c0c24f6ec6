#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.hpp"

namespace wattwise::experiment {

// One successful run of an adaptive sweep: the knob's value and what the run cost.
struct AdaptiveObservation {
  double value = 0;
  double time_s = 0;
  double energy_j = 0;
};

// Runs of one value at most: high enough that the budget, not this cap, ends a sweep steered by one metric
// (its window holds about six measured values; 12 and 50 made the same picks on seeds 101..120), and the
// size of the plan `sweep --adaptive` stores (the grid x this).
constexpr unsigned kDefaultMaxRepeats = 12;

// The headline the sweep closes with (docs/analysis-json.md "headline"): `metric`'s best among the values at
// most `max_slowdown` slower than the reference. Where the limit binds, the pick is the value next to where
// the mean time crosses (1 + max_slowdown) x the reference's, which the metrics' optima do not locate.
struct AdaptiveHeadline {
  analysis::MetricSpec metric;
  double max_slowdown = 0.10;
};

// What an adaptive sweep of one knob may do (docs/sweep.md "Adaptive sweeps").
struct AdaptiveConfig {
  std::string knob;                           // power_limit_w or sm_clock_mhz, for messages
  std::vector<double> grid;                   // the values it may run, ascending
  double reference_value = 0;                 // the metrics' reference setting; a grid value
  std::vector<analysis::MetricSpec> metrics;  // every optimum here is refined and repeated
  std::size_t budget_runs = 0;                // stop after this many successful runs
  std::optional<double> budget_s;             // stop once the runs took this long (sum of their times)
  double precision = 0;                       // knob units: the best is known to +- this
  unsigned max_repeats = kDefaultMaxRepeats;  // runs of one value at most
  std::uint64_t seed = 1;                     // order of the coarse pass
  std::optional<AdaptiveHeadline> headline;   // also locate where its limit binds; none: the metrics alone
  // Each metric's optimum among the values at most this much slower than the reference (analyze's
  // --max-slowdown, judged on the same time curve); none: over every value.
  std::optional<double> max_slowdown;
};

// Defaults chosen on bench/adaptive_regret with seeds 101..120, not the reported 1..20
// (docs/evidence/adaptive-sweep.md).
constexpr std::size_t kCoarsePoints = 7;
// Wanted 95% CI half-width of a near-best mean, relative: half the 0.5% the recommendation is judged by, so
// that two values that far apart are told apart. At 1% and 4 runs (before) a sweep steered by one metric
// stopped after 16.5% (replayed) / 19.1% (simulated) of the exhaustive sweep's runs on seeds 101..120, its
// budget unspent and its replayed picks within 0.5% in 93.5%; spending the budget here, 95.2%
// (docs/evidence/adaptive-sweep.md "Steered by one metric").
constexpr double kTargetCiFraction = 0.0025;
constexpr unsigned kMinRepeatsNearBest = 2;

// The runs' times added up: what a time budget (AdaptiveConfig::budget_s) is spent against.
double runs_time_s(const std::vector<AdaptiveObservation>& runs);

enum class AdaptiveStage { kCoarse, kRefining, kRepeating, kDone };
std::string to_string(AdaptiveStage stage);

// A metric's current best by analyze's decision model (analysis/curve_model.hpp) over the runs so far: the
// grid value nearest the fitted optimum (what the sweep refines around) and the model's pick, the measured
// value `analyze` recommends over the same runs.
struct AdaptiveBest {
  analysis::MetricSpec metric;
  double fitted_value = 0;  // knob units, on the grid
  double pick_value = 0;    // knob units, a measured value
};

struct AdaptiveDecision {
  AdaptiveStage stage = AdaptiveStage::kCoarse;
  std::optional<double> next;      // the value to run next; nullopt when kDone
  std::string reason;              // one phrase for the progress line and the summary
  std::vector<AdaptiveBest> best;  // empty until the coarse pass is done
  bool budget_spent = false;       // kDone because the budget ran out, not because nothing was left to do
};

// The next step of an adaptive sweep, a pure function of the runs so far (any order) and the config: so a
// resumed sweep, handed the stored runs, decides exactly as the first one would have.
//   coarse:    kCoarsePoints values evenly spread over the grid (ends and reference included), seeded order;
//   refining:  per metric, run the grid value nearest the fitted vertex, then halve the gaps to its measured
//              neighbours until they are within `precision` (bisection on the grid);
//   headline:  where config.headline's limit binds, refine each pair of measured neighbours of which one is
//              within the limit and the other over it to one grid step (after the metrics' refinements);
//   repeating: each near-best value (measured within 7 grid steps of a vertex, every metric; and the
//              reference) gets runs until
//              the 95% CI of its metric mean is within kTargetCiFraction, from the pooled spread between
//              repeats (at least kMinRepeatsNearBest, at most max_repeats);
//   done:      when nothing is left to refine or repeat, or the budget is spent.
AdaptiveDecision decide_next(const AdaptiveConfig& config, const std::vector<AdaptiveObservation>& runs);

// `sweep --adaptive` without --budget and --precision: a budget of kDefaultBudgetPerValue runs per grid value
// (54 for 31 limits: 35% of the exhaustive 31 x 5), a precision of kDefaultPrecisionSteps grid steps and the
// headline of `analyze`'s defaults (E at most 10% slower than the reference), which every sweep closes with.
constexpr double kDefaultBudgetPerValue = 1.74;
constexpr double kDefaultPrecisionSteps = 2;
AdaptiveConfig default_adaptive_config(std::string knob, std::vector<double> grid, double reference_value,
                                       std::vector<analysis::MetricSpec> metrics, std::uint64_t seed);

// The grid indices of the coarse pass, in the order they run.
std::vector<std::size_t> coarse_indices(const AdaptiveConfig& config);

}  // namespace wattwise::experiment
