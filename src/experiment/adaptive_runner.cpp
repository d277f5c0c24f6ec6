#include "experiment/adaptive_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/phase_basis.hpp"
#include "store/analysis_runs.hpp"

namespace wattwise::experiment {

std::vector<AdaptiveObservation> adaptive_observations(const store::ResultsStore& store,
                                                       const std::string& knob) {
  std::vector<AdaptiveObservation> runs;
  // On the basis analyze uses by default (the work phase where every run carries one, else the whole run),
  // so that the sweep steers by the figures its recommendation is made from.
  const auto phased = analysis::judge_on_phase(store::read_analysis_runs(store).runs, std::nullopt);
  for (const auto& r : phased.runs) {  // successful runs only, warm-ups left out
    const auto value = r.setting.find(knob);
    if (r.ok && value != r.setting.end()) runs.push_back({value->second, r.time_s, r.energy_j});
  }
  return runs;
}

namespace {

bool planned_at(const plan::PlannedRun& run, const std::string& knob, double value) {
  for (const auto& s : run.settings)
    if (s.knob == knob)
      return std::abs(plan::knob_number(knob, s.value) - value) < 1e-9 * std::max(1.0, value);
  return false;
}

// "12 runs used, 41 left", or for a time budget "3612 s of runs used, 0 s left".
std::string budget_text(const AdaptiveConfig& config, const std::vector<AdaptiveObservation>& runs) {
  if (config.budget_s) {
    const double used_s = runs_time_s(runs);
    return fmt::format("{:.0f} s of runs used, {:.0f} s left", used_s,
                       std::max(*config.budget_s - used_s, 0.0));
  }
  const std::size_t left = config.budget_runs > runs.size() ? config.budget_runs - runs.size() : 0;
  return fmt::format("{} runs used, {} left", runs.size(), left);
}

// The runs a time budget still holds, the next one included (it runs while any time is left), at the mean
// run time so far: the progress line's count and ETA, which the plan's grid x 12 overstated (372 runs for
// 31 limits where a 2 h budget of 5-minute runs holds 24).
std::size_t time_budget_runs_left(double budget_s, const std::vector<AdaptiveObservation>& runs) {
  const double used_s = runs_time_s(runs);
  const double mean_s = used_s / static_cast<double>(runs.size());
  if (!(mean_s > 0)) return 1;
  return static_cast<std::size_t>(std::max(1.0, std::ceil((budget_s - used_s) / mean_s)));
}

}  // namespace

std::function<std::optional<plan::PlannedRun>(const store::ResultsStore&)> adaptive_next_run(
    AdaptiveConfig config, const plan::Plan& plan, Progress* progress, std::shared_ptr<AdaptiveLog> log) {
  return [config = std::move(config), &plan, progress,
          log](const store::ResultsStore& store) -> std::optional<plan::PlannedRun> {
    const auto runs = adaptive_observations(store, config.knob);
    const AdaptiveDecision d = decide_next(config, runs);
    log->last = d;
    log->runs_used = runs.size();
    log->budget = budget_text(config, runs);
    if (!d.next) return std::nullopt;
    if (progress) {
      progress->set_stage(fmt::format("{}: {}; {}", to_string(d.stage), d.reason, log->budget));
      // Before the first run has taken time, a time budget's runs are not known: no count rather than the
      // plan's grid x 12.
      if (config.budget_s)
        progress->set_runs_left(runs.empty() ? std::nullopt
                                             : std::optional(time_budget_runs_left(*config.budget_s, runs)));
      // A run budget counts successful runs: a failed one is made again, so the line's count grows with it
      // rather than sticking at "run 54/54" past the budget's last.
      else if (config.budget_runs > runs.size())
        progress->set_runs_left(config.budget_runs - runs.size());
    }
    const auto succeeded = store.succeeded_plan_indices();
    for (const auto& run : plan.runs)
      if (!run.warmup && !succeeded.contains(run.index) && planned_at(run, config.knob, *d.next)) return run;
    // Every planned repeat of that value succeeded (max_repeats reached): nothing more to learn there.
    log->last->stage = AdaptiveStage::kDone;
    log->last->reason = fmt::format("{}={} has all its {} runs", config.knob, *d.next, config.max_repeats);
    return std::nullopt;
  };
}

std::string adaptive_summary(const AdaptiveConfig& config, const AdaptiveLog& log,
                             const std::map<std::string, double>& recommended) {
  if (!log.last) return "";
  std::string text = fmt::format("adaptive sweep: {} ({})\n", log.last->reason, log.budget);
  if (log.last->best.empty()) return text;
  // analyze and report hold each metric to a limit only when given it: a plain `analyze DB` after a sweep
  // under --max-slowdown recommends the unconstrained optima, so the line names the flag that shows these.
  text += fmt::format(
      "  recommended: analyze's pick above, from the metric's fitted curve (as analyze and report show{})\n",
      config.max_slowdown ? fmt::format(" with --max-slowdown {:g}%", *config.max_slowdown * 100) : "");
  if (config.max_slowdown)
    text += fmt::format("  each optimum looked for among the values at most {:g}% slower than the reference "
                        "(--max-slowdown)\n",
                        *config.max_slowdown * 100);
  for (const auto& b : log.last->best) {
    // The sweep steers by the same decision model analyze recommends from, so the two agree; analyze's
    // (over the runs as stored) is printed where it ranked the metric.
    const auto rec = recommended.find(b.metric.name());
    const double value = rec == recommended.end() ? b.pick_value : rec->second;
    text += fmt::format("  {:<12} recommended {}={} (fitted optimum {}={})\n", b.metric.name(), config.knob,
                        value, config.knob, b.fitted_value);
  }
  // Several optima share one budget; one metric gets all of it, and its pick is sharper (on the replayed
  // V100 tables within 0.5% in ~95% of cases against ~93%: docs/evidence/adaptive-sweep.md). Only where the
  // budget ended the sweep: one that stopped with it unspent had every optimum it needed.
  // The closing line's pick, the lowest energy within the headline's limit, is its own optimum: steered by
  // it, a sweep picks it as well as the exhaustive sweep does (docs/evidence/adaptive-sweep.md "Steered by
  // the headline").
  if (config.metrics.size() > 1 && log.last->budget_spent)
    text += fmt::format(
        "  steered by {} metrics at once, the budget shared between their optima: name the one you will act "
        "on (--metric EDP{}) and the sweep spends all of it there\n",
        config.metrics.size(),
        config.headline ? fmt::format("; for the closing line's pick, --metric {} --max-slowdown {:g}%",
                                      config.headline->metric.name(), config.headline->max_slowdown * 100)
                        : "");
  return text;
}

}  // namespace wattwise::experiment
