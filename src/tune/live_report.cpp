#include "tune/live_report.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::tune {
namespace {

// Values of the knob as people read them: whole watts and MHz, else one decimal.
std::string value_text(TuneKnob knob, double value) {
  const std::string number =
      value == std::round(value) ? fmt::format("{:.0f}", value) : fmt::format("{:.1f}", value);
  return fmt::format("{} {}", number, knob_unit(knob));
}

std::string knob_words(TuneKnob knob) {
  return knob == TuneKnob::kPowerLimit ? "power limit" : "SM clock";
}

nlohmann::json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json count_json(const std::optional<std::uint64_t>& count) {
  return count ? nlohmann::json(*count) : nlohmann::json(nullptr);
}

nlohmann::json setting_json(const LiveTuningResult& r, const SettingSummary& s) {
  return {
      {"value", s.value},
      {"iterations", s.iterations},
      {"iterations_with_energy", s.with_energy},
      {"time_s_mean", s.time_s_mean},
      {"time_s_std", s.time_s_std},
      {"energy_j_mean", s.with_energy > 0 ? nlohmann::json(s.energy_j_mean) : nlohmann::json(nullptr)},
      {"energy_j_std", s.with_energy > 1 ? nlohmann::json(s.energy_j_std) : nlohmann::json(nullptr)},
      {"iterations_for_1pct_time", count_json(iterations_for_precision(s.time_s_mean, s.time_s_std, 0.01))},
      {"iterations_for_1pct_energy",
       count_json(s.with_energy > 1 ? iterations_for_precision(s.energy_j_mean, s.energy_j_std, 0.01)
                                    : std::nullopt)},
      {"captured", s.value == r.captured_value}};
}

}  // namespace

std::string aa_test_line(const LiveTuningResult& r) {
  const std::string start = value_text(r.knob, r.captured_value);
  if (!r.settled)
    return fmt::format("   A/A test (dry run: every candidate ran at {}): the search had not ended\n", start);
  if (*r.settled == r.start_value)
    return fmt::format(
        "   A/A test (dry run: every candidate ran at {}): passed, it holds the start value; nothing it "
        "measured was mistaken for an effect of the setting\n",
        start);
  return fmt::format(
      "   A/A test (dry run: every candidate ran at {}): FAILED, it would settle at {} although no setting "
      "changed; what it took for an effect was drift or noise: do not act on it\n",
      start, value_text(r.knob, *r.settled));
}

LiveTuningResult tuning_result_for(const TunerConfig& config) {
  LiveTuningResult r;
  r.knob = config.knob;
  r.metric = config.metric.name();
  r.max_slowdown = config.max_slowdown;
  r.budget_tolerance = config.budget_tolerance;
  r.max_probe_iterations = config.max_probe_iterations;
  r.search_probe_iterations = config.search_probe_iterations;
  r.captured_value = r.start_value = config.start_value;
  return r;
}

LiveTuningResult tuning_result_of(const SimulatedTuneResult& s, bool dry_run) {
  LiveTuningResult r = tuning_result_for(s.config);
  r.dry_run = dry_run;
  r.decisions = s.decisions;
  r.settled = s.settled_value;
  r.held_start = s.settled_value && s.held_start;
  r.profiling_iterations = s.profiling_iterations;
  r.stationary_wait_iterations = s.stationary_wait_iterations;
  r.iterations_seen = r.iterations_fed = s.iterations;
  r.iterations_until_settled = s.settled_at_iteration;
  return r;
}

const char* to_string(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kProbe:
      return "probe";
    case DecisionKind::kSettle:
      return "settle";
    case DecisionKind::kRetune:
      return "retune";
  }
  return "?";
}

const char* knob_flag(TuneKnob knob) {
  return knob == TuneKnob::kPowerLimit ? "power-limit" : "sm-clock";
}
const char* knob_key(TuneKnob knob) {
  return knob == TuneKnob::kPowerLimit ? "power_limit_w" : "sm_clock_mhz";
}
const char* knob_unit(TuneKnob knob) {
  return knob == TuneKnob::kPowerLimit ? "W" : "MHz";
}

std::optional<std::uint64_t> iterations_for_precision(double mean, double std, double relative) {
  if (!(mean > 0) || !(std > 0) || !(relative > 0)) return std::nullopt;
  const double n = std::pow(1.96 * std / (relative * mean), 2);
  return static_cast<std::uint64_t>(std::ceil(n));
}

std::string decision_line(TuneKnob knob, const Decision& d, bool dry_run, bool changes) {
  const std::string action = !changes ? "holds" : (dry_run ? "would set" : "sets");
  return fmt::format(
      "{}: {} {} {} (iteration {}; estimate of {}: {:.3f} [{:.3f}, {:.3f}] over {} iterations){}{}",
      to_string(d.kind), action, knob_words(knob), value_text(knob, d.value), d.at_iteration,
      value_text(knob, d.estimate_of), d.estimate, d.interval_low, d.interval_high, d.iterations,
      d.reason.empty() ? "" : ": ", d.reason);
}

nlohmann::json decision_json(TuneKnob knob, const Decision& d) {
  return {{"kind", to_string(d.kind)},        {knob_key(knob), d.value},    {"at_iteration", d.at_iteration},
          {"estimate_of", d.estimate_of},     {"estimate", d.estimate},     {"interval_low", d.interval_low},
          {"interval_high", d.interval_high}, {"iterations", d.iterations}, {"reason", d.reason}};
}

nlohmann::json tune_json(const LiveTuningResult& r) {
  nlohmann::json out;
  out["settled"] = r.settled ? nlohmann::json{{knob_key(r.knob), *r.settled}} : nlohmann::json(nullptr);
  out["profiling_iterations"] = r.profiling_iterations;
  out["dry_run"] = r.dry_run;
  out["held_start"] = r.held_start;
  out["decisions"] = nlohmann::json::array();
  for (const auto& d : r.decisions) out["decisions"].push_back(decision_json(r.knob, d));
  nlohmann::json tuning = {
      {"knob", knob_flag(r.knob)},
      {"unit", knob_unit(r.knob)},
      {"metric", r.metric},
      {"max_slowdown", optional_json(r.max_slowdown)},
      {"budget_tolerance", r.max_slowdown ? nlohmann::json(r.budget_tolerance) : nlohmann::json(nullptr)},
      {"max_probe_iterations", r.max_probe_iterations},
      {"search_probe_iterations", r.search_probe_iterations},
      {"captured_value", r.captured_value},
      {"start_value", r.start_value},
      {"iterations_seen", r.iterations_seen},
      {"iterations_fed", r.iterations_fed},
      {"iterations_discarded", r.iterations_discarded},
      {"stationary_wait_iterations", r.stationary_wait_iterations},
      {"iterations_until_settled",
       r.iterations_until_settled ? nlohmann::json(*r.iterations_until_settled) : nlohmann::json(nullptr)},
      {"no_markers", r.no_markers},
      {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)}};
  tuning["changes"] = nlohmann::json::array();
  for (const auto& c : r.changes)
    tuning["changes"].push_back({{"value", c.value}, {"at_s", c.at_s}, {"at_iteration", c.at_iteration}});
  tuning["settings"] = nlohmann::json::array();
  for (const auto& s : r.settings) tuning["settings"].push_back(setting_json(r, s));
  out["tuning"] = std::move(tuning);
  return out;
}

nlohmann::json tuning_state_json(const LiveTuningResult& r, const std::string& phase) {
  const double value = r.changes.empty() || r.dry_run ? r.captured_value : r.changes.back().value;
  return {{"phase", phase},
          {"knob", knob_flag(r.knob)},
          {"unit", knob_unit(r.knob)},
          {"value", value},
          {"captured_value", r.captured_value},
          {"settled", optional_json(r.settled)},
          {"dry_run", r.dry_run},
          {"iterations", r.iterations_seen},
          {"profiling_iterations", r.profiling_iterations},
          {"decisions", r.decisions.size()}};
}

std::string tune_summary(const LiveTuningResult& r) {
  std::string text =
      fmt::format("\n tune ({}, metric {}{}{}):\n", knob_words(r.knob), r.metric,
                  r.max_slowdown ? fmt::format(", max slowdown {:.1f}% (kept to within {:g}% of its time)",
                                                *r.max_slowdown * 100, r.budget_tolerance * 100)
                                  : "",
                  r.dry_run ? ", dry run: no setting was changed" : "");
  if (r.no_markers) return text + "   no iteration markers: nothing was tuned\n";
  text += fmt::format("   started at {}, {} iterations ({} fed to the tuner, {} dropped after changes)\n",
                      value_text(r.knob, r.start_value), r.iterations_seen, r.iterations_fed,
                      r.iterations_discarded);
  if (!r.decisions.empty()) {
    // Left to right as it happened: the setting measured, what its iterations say of it (normalised to the
    // start's), then the setting held from the decision on. The estimate is not of the setting held next,
    // and not always of the one just left: a re-measurement of the start value decides on the candidate
    // before it. In a dry run every iteration ran at the captured setting: "measured as" is what the tuner
    // took them for.
    report::Table decisions({"decision", "iteration", r.dry_run ? "measured as" : "measured", "estimate",
                             "interval", "iterations", r.dry_run ? "then would hold" : "then holds",
                             "reason"});
    decisions.set_align(7, report::Table::Align::kLeft);
    for (const auto& d : r.decisions)
      decisions.add_row({to_string(d.kind), std::to_string(d.at_iteration), value_text(r.knob, d.estimate_of),
                         fmt::format("{:.3f}", d.estimate),
                         fmt::format("[{:.3f}, {:.3f}]", d.interval_low, d.interval_high),
                         std::to_string(d.iterations), value_text(r.knob, d.value), d.reason});
    text += decisions.render("   ");
  }
  if (!r.settings.empty()) {
    report::Table settings({"setting", "iterations", "time/iter", "±", "energy/iter", "±", "n for ±1% E"});
    for (const auto& s : r.settings) {
      const auto n =
          s.with_energy > 1 ? iterations_for_precision(s.energy_j_mean, s.energy_j_std, 0.01) : std::nullopt;
      settings.add_row(
          {value_text(r.knob, s.value) + (s.value == r.captured_value ? " (captured)" : ""),
           std::to_string(s.iterations), report::format_seconds(s.time_s_mean),
           report::format_seconds(s.time_s_std),
           report::format_energy_j(s.with_energy ? std::optional(s.energy_j_mean) : std::nullopt),
           report::format_energy_j(s.with_energy > 1 ? std::optional(s.energy_j_std) : std::nullopt),
           n ? std::to_string(*n) : "n/a"});
    }
    text += settings.render("   ");
  }
  if (r.settled) {
    text += r.held_start ? fmt::format(
                               "   holds the start value {}: no setting beats the start value within "
                               "the noise ({} profiling iterations",
                               value_text(r.knob, *r.settled), r.profiling_iterations)
                         : fmt::format("   settled at {} after {} profiling iterations",
                                       value_text(r.knob, *r.settled), r.profiling_iterations);
    if (r.iterations_until_settled)
      text += fmt::format("{}at the job's iteration {}, dropped ones included{}", r.held_start ? "; " : " (",
                          *r.iterations_until_settled, ")");
    else if (r.held_start)
      text += ")";
    text += "\n";
  } else {
    text += fmt::format("   not settled when the job ended ({} profiling iterations so far)\n",
                        r.profiling_iterations);
  }
  if (r.stationary_wait_iterations > 0)
    text +=
        fmt::format("   waited {} iterations at the start value for them to be stationary (not profiling)\n",
                    r.stationary_wait_iterations);
  if (r.dry_run) text += aa_test_line(r);
  if (!r.error.empty()) text += fmt::format("   stopped: {}\n", r.error);
  return text;
}

}  // namespace wattwise::tune
