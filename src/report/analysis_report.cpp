#include "report/analysis_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/text.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

// A run that set nothing (`measure --db`, the one run of a `tune --db` database) ran at the GPUs' settings
// as it found them: say so rather than print nothing.
std::string setting_text(const analysis::Setting& setting) {
  return setting.empty() ? "as found" : analysis::to_string(setting);
}

// The band in one cell: how many settings, and the range each knob spans across them.
std::string band_text(const analysis::Recommendation& r) {
  if (!r.band_known) return r.band.size() > 1 ? fmt::format("{} (exact ties)", r.band.size()) : "unknown";
  if (r.band.size() == 1) return "1 (this one)";
  std::map<std::string, std::pair<double, double>> ranges;
  for (const auto& member : r.band) {
    for (const auto& [knob, value] : member.setting) {
      auto [it, inserted] = ranges.try_emplace(knob, value, value);
      if (inserted) continue;
      it->second.first = std::min(it->second.first, value);
      it->second.second = std::max(it->second.second, value);
    }
  }
  std::string text = fmt::format("{}:", r.band.size());
  for (const auto& [knob, range] : ranges) {
    text += range.first == range.second ? fmt::format(" {}={}", knob, range.first)
                                        : fmt::format(" {} {}-{}", knob, range.first, range.second);
  }
  return for_terminal(text);
}

std::string change_text(const analysis::Recommendation& r) {
  return fmt::format("{} energy, {} time", format_percent(r.energy_vs_ref_pct), format_percent(r.time_vs_ref_pct));
}

std::string metric_phrase(const analysis::Headline& h) {
  const std::string what = h.metric.kind == analysis::MetricKind::kEnergy ? "the lowest energy"
                                                                           : "the best " + h.metric.name();
  return h.max_slowdown
             ? fmt::format("{} at most {:g}% slower than the reference", what, *h.max_slowdown * 100)
             : what;
}

// Where the slowdown's interval was borrowed from the settings run more than once: the reader should know
// that the pick or the reference ran once.
const char* pooled_words(const analysis::Recommendation& r) {
  return r.time_vs_ref_ci95_from == analysis::SlowdownIntervalFrom::kPooledSpread
             ? ", from the time spread of the settings run more than once"
             : "";
}

}  // namespace

std::string slowdown_caveat(const analysis::Headline& h, CaveatStyle style) {
  const bool box = style == CaveatStyle::kBoxSentence;
  const char* its = box ? "Its" : "its";
  const char* of_the = box ? "of the" : "the";
  const analysis::Recommendation& r = h.pick;
  if (analysis::may_exceed_limit(h)) {
    return fmt::format("{} time may be over the {:g}% limit within the noise: {} (95% interval {} to {}{}); more "
                       "runs of it and {} reference would tell",
                       its, *h.max_slowdown * 100, format_percent(r.time_vs_ref_pct),
                       format_percent(r.time_vs_ref_ci95_pct->first), format_percent(r.time_vs_ref_ci95_pct->second),
                       pooled_words(r), of_the);
  }
  // Over the limit on its one run, not "may be": curve_judgement says so.
  if (analysis::slowdown_unknown(h) && !analysis::judged_within_on_the_curve_only(h))
    return fmt::format("{} slowdown, {}, has no interval (no repeats): within the noise its time may be over the "
                       "{:g}% limit; repeats of it and {} reference would tell",
                       its, format_percent(r.time_vs_ref_pct), *h.max_slowdown * 100, of_the);
  return "";
}

std::string curve_judgement(const analysis::Headline& h, CaveatStyle style) {
  if (!analysis::judged_within_on_the_curve_only(h)) return "";
  const analysis::Recommendation& r = h.pick;
  const double limit_pct = *h.max_slowdown * 100;
  const char* on = style == CaveatStyle::kBoxSentence ? "On" : "on";
  // No setting run twice: the pick has one run, and nothing measured its noise.
  if (analysis::slowdown_unknown(h))
    return fmt::format(
        "{} the time curve through its neighbours' runs it is {} ({:g}% allowed); its own run, {}, is over "
        "the limit, by its noise or not: no setting was run twice to tell (repeats of it and {} reference "
        "would)",
        on, format_percent(*r.time_vs_ref_curve_pct), limit_pct,
        format_percent_over(r.time_vs_ref_pct, limit_pct),
        style == CaveatStyle::kBoxSentence ? "of the" : "the");
  // By their noise: a value whose runs are over the limit beyond it does not qualify on the curve
  // (analysis/slowdown_limit.hpp), so the runs' interval reaches back within the limit here.
  return fmt::format(
      "{} the time curve through its neighbours' runs it is {} ({:g}% allowed); its own runs' mean, {}, is "
      "over the limit by their noise",
      on, format_percent(*r.time_vs_ref_curve_pct), limit_pct,
      format_percent_over(r.time_vs_ref_pct, limit_pct));
}

std::string headline_text(const analysis::Analysis& a) {
  const analysis::Headline& h = a.headline;
  const analysis::Recommendation& r = h.pick;
  const std::string reference = for_terminal(setting_text(a.reference().setting));
  std::string out;
  if (r.setting_index == a.reference_index) {
    out = fmt::format(" Recommended ({}): keep the current setting, {} (the reference)\n", metric_phrase(h),
                      reference);
  } else if (r.significant && !*r.significant) {
    out = fmt::format(
        " Recommended ({}): keep the current setting, {}: {} ({}) is not distinguishable from it within the "
        "noise\n",
        metric_phrase(h), reference, for_terminal(setting_text(r.setting)), change_text(r));
  } else {
    out = fmt::format(" Recommended ({}): {}, {}{}\n", metric_phrase(h), for_terminal(setting_text(r.setting)),
                      change_text(r), r.significant ? "" : " (no repeats: noise unknown)");
  }
  if (const std::string caveat = slowdown_caveat(h, CaveatStyle::kHeadlineLine); !caveat.empty())
    out += "   " + caveat + "\n";
  if (const std::string judged = curve_judgement(h, CaveatStyle::kHeadlineLine); !judged.empty())
    out += "   " + judged + "\n";
  if (h.unconstrained) {
    const analysis::Recommendation& u = *h.unconstrained;
    out += u.setting_index == r.setting_index
               ? fmt::format("   without the {:g}% limit: the same setting\n", *h.max_slowdown * 100)
               : fmt::format("   without the {:g}% limit: {}, {}\n", *h.max_slowdown * 100,
                             for_terminal(setting_text(u.setting)), change_text(u));
  }
  for (const auto* rec : {&r, h.unconstrained ? &*h.unconstrained : nullptr})
    if (rec && rec->decision.edge) {
      out += "   " + for_terminal(rec->decision.edge_text()) + "\n";
      break;
    }
  return out;
}

std::string analysis_text(const analysis::Analysis& a) {
  const auto& ref = a.reference();
  const analysis::ReferencePoint ref_point{ref.energy_j.mean, ref.time_s.mean};
  std::string out = fmt::format("\n {}\n", for_terminal(analysis::basis_text(a.basis)));
  if (a.basis.runs_left_out > 0)
    out += fmt::format(" {} run(s) without phase '{}' left out\n", a.basis.runs_left_out,
                       for_terminal(a.basis.phase));
  if (const auto warning = analysis::startup_warning(a.basis); !warning.empty())
    out += fmt::format(" warning: {}\n", for_terminal(warning));
  if (const auto scope = analysis::scope_text(a.scope); !scope.empty())
    out += fmt::format(" {}\n", for_terminal(scope));
  out += fmt::format(" Reference: {} ({} run{})  E = {}, t = {}\n\n", for_terminal(setting_text(ref.setting)),
                     ref.runs.size(), ref.runs.size() == 1 ? "" : "s", format_energy_j(ref.energy_j.mean),
                     format_seconds(ref.time_s.mean));

  std::vector<std::string> headers = {"setting", "runs", "energy (± std)"};
  // The measurement's own error bar (docs/sweep.md "Tables"), apart from the spread of repeats; shown when
  // the runs carry one (a database of schema 7 or later, a runs CSV with energy_uncertainty_j).
  bool any_bar = false;
  for (const auto& s : a.settings) any_bar = any_bar || s.energy_uncertainty_j.has_value();
  if (any_bar) headers.push_back("meas. ±");
  for (const char* header : {"vs ref", "time (± std)", "vs ref", "avg power"}) headers.push_back(header);
  bool any_work = false;
  for (const auto& s : a.settings) any_work = any_work || s.j_per_sample.has_value();
  if (any_work) headers.push_back("J/sample");
  // Both scopes where they differ: the other one's energy beside this one's.
  const analysis::Analysis* other = a.other_scope.get();
  const std::string other_name =
      other && other->scope.scope == analysis::EnergyScope::kNode ? "node energy" : "job GPUs' energy";
  if (other) headers.push_back(other_name);
  for (const auto& m : a.metrics)
    if (m.kind != analysis::MetricKind::kEnergy && m.kind != analysis::MetricKind::kTime)
      headers.push_back(m.name());
  headers.push_back("Pareto");
  Table table(headers);
  for (std::size_t i = 0; i < a.settings.size(); ++i) {
    const auto& s = a.settings[i];
    std::vector<std::string> row = {setting_text(s.setting) + (i == a.reference_index ? " (ref)" : ""),
                                    std::to_string(s.runs.size()),
                                    format_energy_spread_j(s.energy_j.mean, s.energy_j.stddev)};
    if (any_bar) row.push_back(s.energy_uncertainty_j ? format_energy_j(*s.energy_uncertainty_j) : "n/a");
    row.insert(row.end(), {format_percent(100 * (s.energy_j.mean / ref_point.energy_j - 1)),
                                    format_seconds_spread(s.time_s.mean, s.time_s.stddev),
                                    format_percent(100 * (s.time_s.mean / ref_point.time_s - 1)),
                                    format_power_w(s.power_w.mean)});
    if (any_work) row.push_back(s.j_per_sample ? format_number(s.j_per_sample->mean, 4) : "n/a");
    if (other)
      row.push_back(
          format_energy_spread_j(other->settings.at(i).energy_j.mean, other->settings.at(i).energy_j.stddev));
    for (const auto& m : a.metrics) {
      if (m.kind == analysis::MetricKind::kEnergy || m.kind == analysis::MetricKind::kTime) continue;
      const double v = analysis::metric_value(m, s.energy_j.mean, s.time_s.mean, ref_point);
      row.push_back(format_number(v, m.kind == analysis::MetricKind::kGainLoss ? 1 : 3));
    }
    row.push_back(a.pareto.at(i) ? "*" : "");
    table.add_row(row);
  }
  out += table.render("   ");
  out +=
      "   EDP, ED2P and EDS are normalised to the reference (1.000); gain-loss is energy gain % minus time "
      "loss %.\n";

  out += fmt::format("\n Best setting per metric{}:\n\n",
                     a.max_slowdown
                         ? fmt::format(" (at most {:g}% slower than the reference)", *a.max_slowdown * 100)
                         : std::string());
  std::vector<std::string> best_headers = {"metric", "setting", "energy",       "vs ref",
                                           "time",   "vs ref",  "beyond noise", "band"};
  if (other)
    best_headers.push_back(other && other->scope.scope == analysis::EnergyScope::kNode
                               ? "on node energy"
                               : "on job GPUs' energy");
  Table best(best_headers);
  best.set_align(1, Table::Align::kLeft);
  best.set_align(6, Table::Align::kLeft);
  best.set_align(7, Table::Align::kLeft);
  if (other) best.set_align(8, Table::Align::kLeft);
  for (std::size_t k = 0; k < a.recommendations.size(); ++k) {
    const auto& r = a.recommendations[k];
    const std::string significance =
        !r.significant ? "unknown (no repeats)" : (*r.significant ? "yes" : "no");
    std::vector<std::string> row = {r.metric.name(),
                                    setting_text(r.setting),
                                    format_energy_j(r.energy_j),
                                    format_percent(r.energy_vs_ref_pct),
                                    format_seconds(r.time_s),
                                    format_percent(r.time_vs_ref_pct),
                                    significance,
                                    band_text(r)};
    if (other) row.push_back(for_terminal(setting_text(other->recommendations.at(k).setting)));
    best.add_row(row);
  }
  out += best.render("   ");
  out +=
      "   band: the settings not distinguishable from the best (one-sided t at 95% on the per-run metric,\n"
      "   one run's noise pooled over the settings); the pick: the fastest of them within 0.5% of the "
      "best.\n";
  for (const auto& r : a.recommendations)
    if (!r.note.empty()) out += fmt::format("   {}: {}\n", r.metric.name(), for_terminal(r.note));
  for (const auto& line : analysis::scope_disagreements(a))
    out += fmt::format(" warning: the energy scopes pick differently for {}\n", for_terminal(line));
  return out;
}

}  // namespace wattwise::report
