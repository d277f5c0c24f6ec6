#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiment/adaptive_sweep.hpp"
#include "experiment/progress.hpp"
#include "plan/plan.hpp"
#include "store/results_store.hpp"

namespace wattwise::experiment {

// The successful, non-warm-up runs stored so far, as the adaptive decisions read them: each run's time and
// energy on the basis `analyze` uses by default (its work phase where every run carries one, else the whole
// run; analysis::judge_on_phase). The one place that reads the store for them.
std::vector<AdaptiveObservation> adaptive_observations(const store::ResultsStore& store,
                                                       const std::string& knob);

// What the runner's next_run of an adaptive sweep last decided: for the summary after the sweep.
struct AdaptiveLog {
  std::optional<AdaptiveDecision> last;
  std::size_t runs_used = 0;  // successful runs in the store at the last decision
  std::string budget;         // "12 runs used, 41 left" at the last decision
};

// SweepOptions::next_run for an adaptive sweep of `plan` (one knob, its values the config's grid, each
// planned max_repeats times): decides from the stored runs, returns the first planned run of the chosen
// value that has not succeeded yet, nullopt when done. Says what it is doing on `progress` (may be null)
// and records its last decision in `log`.
std::function<std::optional<plan::PlannedRun>(const store::ResultsStore&)> adaptive_next_run(
    AdaptiveConfig config, const plan::Plan& plan, Progress* progress, std::shared_ptr<AdaptiveLog> log);

// The lines printed after an adaptive sweep, below analyze's table: why it stopped, runs used of the budget,
// and for each metric `recommended`, analyze's recommendation over the same runs (by metric name; the
// sweep's own pick from the same decision model where analyze did not rank that metric), with the fitted
// optimum the sweep steered to. One answer: the sweep's decisions and analyze's use one model.
std::string adaptive_summary(const AdaptiveConfig& config, const AdaptiveLog& log,
                             const std::map<std::string, double>& recommended);

}  // namespace wattwise::experiment
