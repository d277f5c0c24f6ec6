#include "cli/adaptive_flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cli/flag_values.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"
#include "experiment/adaptive_runner.hpp"
#include "plan/knob.hpp"
#include "store/results_store.hpp"

namespace wattwise::cli {
namespace {

constexpr double kMaxBudgetRuns = 1e6;

std::vector<analysis::MetricSpec> adaptive_metrics(const AdaptiveFlags& flags) {
  const std::vector<std::string> names =
      flags.metrics.empty() ? std::vector<std::string>{"E", "EDP", "eds:2.0", "eds:1.5"} : flags.metrics;
  std::vector<analysis::MetricSpec> metrics;
  for (const auto& name : names) {
    const auto metric = analysis::parse_metric(name);
    if (metric.higher_is_better())
      throw usage_error(
          fmt::format("--metric {}: an adaptive sweep looks for a lowest metric; use E, EDP, "
                      "ED2P, eds:K or time",
                      name));
    metrics.push_back(metric);
  }
  return metrics;
}

// "40" -> 40 runs; "2h", "90m", "600s" -> a time budget.
void apply_budget(const std::string& text, experiment::AdaptiveConfig& config) {
  const std::string units = "hms";
  if (!text.empty() && units.find(text.back()) != std::string::npos) {
    const double per_unit = text.back() == 'h' ? 3600 : text.back() == 'm' ? 60 : 1;
    const std::string number = text.substr(0, text.size() - 1);
    config.budget_s =
        to_seconds(parse_duration("--budget", number, DurationUnit::kSeconds, 1e-3, 1e7)) * per_unit;
    config.budget_runs = static_cast<std::size_t>(kMaxBudgetRuns);
    return;
  }
  try {
    config.budget_runs = parse_count("--budget", text, 1, static_cast<std::size_t>(kMaxBudgetRuns));
  } catch (const Error&) {
    throw usage_error(fmt::format(
        "--budget {}: give a number of runs from 1 to {} (e.g. 40) or a time of runs (2h, 90m, 600s)", text,
        static_cast<std::size_t>(kMaxBudgetRuns)));
  }
}

double parse_precision(const std::string& text, const std::string& knob) {
  const std::string unit = knob == plan::kPowerLimitKnob ? "W" : "MHz";
  std::string number = text;
  if (number.size() > unit.size() && number.ends_with(unit)) number.resize(number.size() - unit.size());
  if (const auto value = parse_number(number); value && *value > 0) return *value;
  throw usage_error(fmt::format("--precision {}: give a positive number of {} (e.g. 5{})", text, unit, unit));
}

}  // namespace

void add_adaptive_flags(CLI::App& app, AdaptiveFlags& flags) {
  app.add_flag("--adaptive", flags.enabled,
               "run only the settings needed to find the best of one knob (--power-limit or --sm-clock): "
               "coarse pass, refinement around the optimum, repeats near it (docs/sweep.md)");
  app.add_option(
      "--budget", flags.budget,
      "--adaptive: at most N runs, or a time (2h, 90m, 600s) of runs (default 1.74 runs per value)");
  app.add_option("--precision", flags.precision,
                 "--adaptive: the knob's best known to +- this, e.g. 5W or 50MHz (default two grid steps)");
  app.add_option("--metric", flags.metrics,
                 "--adaptive: metric(s) whose optimum it refines: E, EDP, ED2P, eds:K, time (repeatable; "
                 "default E, EDP, eds:2.0, eds:1.5)");
}

namespace {

// The repeats of the plan an adaptive sweep stored in `db`; nullopt where there is none (no such file, not
// an adaptive sweep's, options unreadable: the resume itself says what is wrong).
std::optional<unsigned> stored_adaptive_repeats(const std::filesystem::path& db) {
  if (db.empty() || !std::filesystem::exists(db)) return std::nullopt;
  const auto store = store::ResultsStore::open_read_only(db);
  const auto options = nlohmann::json::parse(store.meta("sweep_json"), nullptr, false);
  if (!options.is_object() || !options.contains("adaptive")) return std::nullopt;
  const auto plan = store.plan();
  if (!plan.contains("repeats") || !plan.at("repeats").is_number_unsigned()) return std::nullopt;
  return plan.at("repeats").get<unsigned>();
}

}  // namespace

unsigned adaptive_plan_repeats(const AdaptiveFlags& flags, const CLI::App& app,
                               const std::filesystem::path& resumed_db) {
  if (!flags.enabled) {
    for (const char* name : {"--budget", "--precision", "--metric"})
      if (app.count(name) > 0) throw usage_error(fmt::format("{} needs --adaptive", name));
    return 0;
  }
  if (app.count("--repeat") > 0)
    throw usage_error(
        "--adaptive decides the repeats itself: drop --repeat (give --budget to bound the runs)");
  return stored_adaptive_repeats(resumed_db).value_or(experiment::kDefaultMaxRepeats);
}

experiment::AdaptiveConfig adaptive_config(const AdaptiveFlags& flags, const plan::Plan& plan,
                                           const std::optional<analysis::Setting>& reference,
                                           std::uint64_t seed, const std::optional<std::string>& max_slowdown) {
  const auto& knobs = plan.spec.knobs;
  if (knobs.size() != 1 || (knobs[0].name != plan::kPowerLimitKnob && knobs[0].name != plan::kSmClockKnob)) {
    throw usage_error(
        "--adaptive sweeps one knob, --power-limit or --sm-clock: refining two knobs at once "
        "(coordinate-wise) "
        "is not implemented; sweep one adaptively with the other fixed");
  }
  if (plan.spec.warmup_runs > 0)
    throw usage_error("--adaptive does not plan warm-up runs: drop --warmup-runs");
  const std::string& knob = knobs[0].name;
  std::vector<double> grid;
  for (const auto& v : knobs[0].values) grid.push_back(plan::knob_number(knob, v));
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  if (grid.size() < 3) throw usage_error("--adaptive needs at least 3 values of the knob: give a range");
  double reference_value = grid.back();
  if (reference && reference->contains(knob)) reference_value = reference->at(knob);
  auto config =
      experiment::default_adaptive_config(knob, grid, reference_value, adaptive_metrics(flags), seed);
  // The plan holds the runs a value may get: grid x kDefaultMaxRepeats, or fewer in a database written
  // before the cap was 12 (grid x 4), resumed with `--resume --db X`. Asking for more than the plan holds
  // ended such a sweep at the first value with 4 runs, its budget unspent.
  config.max_repeats = std::min(experiment::kDefaultMaxRepeats, plan.spec.repeats);
  if (max_slowdown) {
    config.max_slowdown = analysis::parse_max_slowdown_flag(*max_slowdown);
    if (config.max_slowdown)
      config.headline->max_slowdown = *config.max_slowdown;
    else
      config.headline.reset();  // the closing headline has no limit either
  }
  if (flags.budget) apply_budget(*flags.budget, config);
  if (flags.precision) config.precision = parse_precision(*flags.precision, knob);
  return config;
}

std::string adaptive_dry_run_note(const experiment::AdaptiveConfig& config, std::size_t planned_runs) {
  const std::string makes =
      config.budget_s
          ? fmt::format("runs until their times add up to {:.0f} s, from the {} planned below",
                        *config.budget_s, planned_runs)
          : fmt::format("at most {} of the {} runs planned below", config.budget_runs, planned_runs);
  return fmt::format(
      "adaptive sweep: it makes {} (up to {} a value), each chosen after the runs before it: the plan is "
      "every run it may make, not the ones it will\n",
      makes, config.max_repeats);
}

std::function<std::string(const std::map<std::string, double>&)> wire_adaptive_sweep(
    const experiment::AdaptiveConfig& config, experiment::SweepOptions& options) {
  auto log = std::make_shared<experiment::AdaptiveLog>();
  options.next_run = experiment::adaptive_next_run(config, options.plan, options.progress, log);
  options.progress_total = config.budget_s ? experiment::ProgressTotal::unknown()
                                           : experiment::ProgressTotal::runs(config.budget_runs);
  return [config, log](const std::map<std::string, double>& recommended) {
    return experiment::adaptive_summary(config, *log, recommended);
  };
}

}  // namespace wattwise::cli
