#include "experiment/adaptive_runner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "analysis/runs_csv.hpp"

namespace wattwise::experiment {

std::vector<AdaptiveObservation> adaptive_observations(const store::ResultsStore& store,
                                                       const std::string& knob) {
  std::stringstream csv;
  store.export_runs_csv(csv);  // successful runs only, warm-ups left out
  std::vector<AdaptiveObservation> runs;
  for (const auto& r : analysis::parse_runs_csv(csv, "the results database")) {
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

}  // namespace

std::function<std::optional<plan::PlannedRun>(const store::ResultsStore&)> adaptive_next_run(
    AdaptiveConfig config, const plan::Plan& plan, Progress* progress, std::shared_ptr<AdaptiveLog> log) {
  return [config = std::move(config), &plan, progress,
          log](const store::ResultsStore& store) -> std::optional<plan::PlannedRun> {
    const auto runs = adaptive_observations(store, config.knob);
    const AdaptiveDecision d = decide_next(config, runs);
    log->last = d;
    log->runs_used = runs.size();
    if (!d.next) return std::nullopt;
    if (progress) {
      const std::size_t left = config.budget_runs > runs.size() ? config.budget_runs - runs.size() : 0;
      progress->set_stage(
          fmt::format("{}: {}; {} runs used, {} left", to_string(d.stage), d.reason, runs.size(), left));
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

std::string adaptive_summary(const AdaptiveConfig& config, const AdaptiveLog& log) {
  if (!log.last) return "";
  std::string text = fmt::format("adaptive sweep: {} ({} runs of a budget of {})\n", log.last->reason,
                                 log.runs_used, config.budget_runs);
  for (const auto& b : log.last->best) {
    text += fmt::format("  {:<12} best {}={} (fitted optimum {}={})\n", b.metric.name(), config.knob,
                        b.pick_value, config.knob, b.fitted_value);
  }
  return text;
}

}  // namespace wattwise::experiment
