#include "report/html/report_recommend.hpp"
#include "report/html/report_tune.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/analysis_report.hpp"
#include "report/html/html_escape.hpp"

namespace wattwise::report::html {

namespace {

using analysis::MetricKind;

std::string gpu_flag(const std::vector<unsigned>& gpus, std::size_t i) {
  return gpus.empty() ? "" : fmt::format(" -i {}", gpus[i]);
}

// One line per GPU (nvidia-smi takes one -i per call on older drivers), or one for all GPUs.
void per_gpu(std::vector<std::string>& lines, const std::vector<unsigned>& gpus, const std::string& action) {
  for (std::size_t i = 0; i < std::max<std::size_t>(gpus.size(), 1); ++i)
    lines.push_back(fmt::format("sudo nvidia-smi{} {}", gpu_flag(gpus, i), action));
}

std::string unit_of(const std::string& knob, std::string& name) {
  for (const auto& [suffix, unit] : {std::pair{"_w", "W"}, {"_mhz", "MHz"}, {"_s", "s"}, {"_j", "J"}})
    if (knob.size() > std::string(suffix).size() && knob.ends_with(suffix)) {
      name = knob.substr(0, knob.size() - std::string(suffix).size());
      return unit;
    }
  name = knob;
  return "";
}

std::string metric_words(const analysis::MetricSpec& m) {
  switch (m.kind) {
    case MetricKind::kEnergy:
      return "the lowest energy (E)";
    case MetricKind::kEdp:
      return "the lowest energy-delay product (EDP)";
    case MetricKind::kEd2p:
      return "the lowest ED2P";
    case MetricKind::kEds:
      return fmt::format("the lowest {}", m.name());
    case MetricKind::kGainLoss:
      return "the highest energy gain minus time loss";
    case MetricKind::kTime:
      return "the shortest time";
  }
  return m.name();
}

std::string change_words(double pct, const char* less, const char* more) {
  return fmt::format("{:.1f}% {}", std::abs(pct), pct <= 0 ? less : more);
}

// The band in words: the settings themselves when few, else the range each knob spans.
std::string band_words(const ReportModel& model, const analysis::Recommendation& r) {
  if (!r.band_known) return "which settings are within the noise is unknown: no setting was repeated";
  if (r.band.size() <= 1) return "no other setting is within the noise of the best";
  std::string list;
  if (r.band.size() <= 8) {
    for (const auto& m : r.band) list += (list.empty() ? "" : "; ") + setting_words(m.setting);
  } else {
    std::map<std::string, std::pair<double, double>> ranges;
    for (const auto& m : r.band)
      for (const auto& [knob, v] : m.setting) {
        auto [it, inserted] = ranges.try_emplace(knob, v, v);
        it->second = {std::min(it->second.first, v), std::max(it->second.second, v)};
      }
    for (const auto& [knob, range] : ranges)
      list += (list.empty() ? "" : ", ") + setting_words({{knob, range.first}}) +
              (range.first == range.second ? "" : fmt::format(" to {:g}", range.second));
  }
  return fmt::format(
      "{} settings are not distinguishable from the best ({}): {}; the pick is the {} of the best",
      r.band.size(), setting_words(model.settings.at(r.best_index).setting), list, r.tie_rule);
}

std::string commands_html(const ReportModel& model, const analysis::Recommendation& r) {
  const auto& ref = model.settings.at(model.reference_index).setting;
  const auto cmds = apply_commands(r.setting, ref, model.info.gpu_indices, model.info.default_power_limit_w);
  std::string out;
  if (!cmds.apply.empty()) {
    std::string lines, undo;
    for (const auto& l : cmds.apply) lines += escape_html(l) + "\n";
    for (const auto& l : cmds.undo) undo += escape_html(l) + "\n";
    out +=
        "<p class=\"changes-gpu\">&#9888; These commands <b>change GPU settings</b> (root needed; they "
        "last until undone, a driver reload or a reboot):</p>\n<pre class=\"command\">" +
        lines + "</pre>\n<p class=\"undo\">Undo:</p>\n<pre class=\"command undo\">" + undo + "</pre>\n";
  }
  if (!cmds.job.empty()) {
    std::string knobs;
    for (const auto& k : cmds.job) knobs += (knobs.empty() ? "" : ", ") + escape_html(k);
    out += "<p>Run the job with " + knobs + " (a setting of the job: no GPU command).</p>\n";
  }
  return out;
}

}  // namespace

std::string setting_words(const analysis::Setting& setting) {
  std::string out;
  for (const auto& [knob, value] : setting) {
    std::string name;
    const std::string unit = unit_of(knob, name);
    std::replace(name.begin(), name.end(), '_', ' ');
    out += (out.empty() ? "" : ", ") + name + fmt::format(" {:g}", value) + (unit.empty() ? "" : " " + unit);
  }
  return out.empty() ? "as measured" : out;
}

ApplyCommands apply_commands(const analysis::Setting& setting, const analysis::Setting& reference,
                             const std::vector<unsigned>& gpu_indices,
                             std::optional<double> default_power_limit_w) {
  ApplyCommands out;
  if (setting == reference) return out;
  for (const auto& [knob, value] : setting) {
    const auto ref = reference.find(knob);
    const bool changed = ref == reference.end() || ref->second != value;
    if (knob == "power_limit_w") {
      if (!changed) continue;
      per_gpu(out.apply, gpu_indices, fmt::format("-pl {:g}", value));
      const auto undo_w = default_power_limit_w    ? default_power_limit_w
                          : ref != reference.end() ? std::optional(ref->second)
                                                   : std::nullopt;
      if (undo_w) per_gpu(out.undo, gpu_indices, fmt::format("-pl {:g}", *undo_w));
    } else if (knob == "sm_clock_mhz") {
      if (!changed) continue;
      per_gpu(out.apply, gpu_indices, fmt::format("-lgc {0:g},{0:g}", value));
      per_gpu(out.undo, gpu_indices, "-rgc");
    } else if (knob == "mem_clock_mhz") {
      if (!changed) continue;
      per_gpu(out.apply, gpu_indices, fmt::format("-lmc {0:g},{0:g}", value));
      per_gpu(out.undo, gpu_indices, "-rmc");
    } else {
      out.job.push_back(fmt::format("{}={:g}", knob, value));
    }
  }
  return out;
}

void set_headline(ReportModel& model, const analysis::MetricSpec& metric) {
  for (std::size_t i = 0; i < model.recommendations.size(); ++i)
    if (model.recommendations[i].metric == metric) {
      model.headline = i;
      // The lead was made for the analysis's headline metric; another metric's box is its recommendation.
      if (model.lead && !(model.lead->metric == metric)) model.lead.reset();
      return;
    }
  throw usage_error(fmt::format("--metric {}: not among the metrics analysed", metric.name()));
}

namespace {

// The sweep to suggest after one measurement: the GPUs' own power-limit range in about ten steps of a round
// size (150:300:25 on a V100, 200:700:50 on an H100), or placeholders where the range is not known.
std::string suggested_power_limit_range(const ReportInfo& info) {
  if (!info.min_power_limit_w || !info.max_power_limit_w ||
      *info.max_power_limit_w <= *info.min_power_limit_w)
    return "MIN:MAX:STEP";
  const double span = *info.max_power_limit_w - *info.min_power_limit_w;
  double step = 100;
  for (const double round : {5.0, 10.0, 25.0, 50.0, 100.0})
    if (round * 10 >= span) {
      step = round;
      break;
    }
  return fmt::format("{:g}:{:g}:{:g}", *info.min_power_limit_w, *info.max_power_limit_w, step);
}

}  // namespace

std::string recommendation_box_html(const ReportModel& model) {
  if (model.tune) return tune_box_html(*model.tune);
  if (model.single_run)
    return fmt::format(
        "<section id=\"recommendation\" class=\"recommendation single\"><h2>One measurement</h2>\n"
        "<p>One run at one setting: there is nothing to compare it with, so no recommendation. To find "
        "the setting that saves energy, sweep the power limit (<code>wattwise sweep --power-limit "
        "{} --repeat 3 --db sweep.db -- CMD</code>, docs/sweep.md) or let wattwise tune it while "
        "the job runs (<code>wattwise tune -- CMD</code>, docs/tune.md).</p>\n</section>\n",
        suggested_power_limit_range(model.info));
  if (model.recommendations.empty() || model.headline >= model.recommendations.size()) return "";
  // The pick within the slowdown limit (the lead), else the headline metric's recommendation.
  const auto& r = model.lead ? model.lead->pick : model.recommendations[model.headline];
  const std::optional<double> limit = model.lead ? model.lead->max_slowdown : model.max_slowdown;
  const auto& ref = model.settings.at(model.reference_index);
  const bool is_reference = r.setting_index == model.reference_index;
  // Not distinguishable from the reference: nothing to change, so no command to change it.
  const bool keep = is_reference || (r.significant && !*r.significant);
  const std::string noise = !r.significant ? "noise unknown: no repeats"
                            : *r.significant
                                ? "beyond the noise between repeats"
                                : "within the noise between repeats: not distinguishable from the reference";
  const std::string limit_words =
      limit ? fmt::format(" at most {:g}% slower than the reference (<code>--max-slowdown {:g}%</code>{})",
                          *limit * 100, *limit * 100,
                          model.lead && model.lead->unconstrained ? "; <code>none</code> lifts it" : "")
            : "";
  std::string body = fmt::format(
      "<p class=\"why\">The setting with {}{}: the metric chosen with <code>--metric</code> ({}); the other "
      "metrics are in the Results table.</p>\n",
      escape_html(metric_words(r.metric)), limit_words, escape_html(r.metric.name()));
  if (is_reference) {
    body += fmt::format(
        "<p class=\"saving\">Keep the current setting, {} (the reference): no other setting does better on "
        "{}.</p>\n",
        escape_html(setting_words(ref.setting)), escape_html(r.metric.name()));
  } else if (keep) {
    body += fmt::format(
        "<p class=\"saving\">Keep the current setting, {} (the reference): {} would use {} energy and be {}, "
        "{}.</p>\n",
        escape_html(setting_words(ref.setting)), escape_html(setting_words(r.setting)),
        change_words(r.energy_vs_ref_pct, "less", "more"), change_words(r.time_vs_ref_pct, "faster", "slower"),
        noise);
  } else {
    body += fmt::format("<p class=\"saving\">{} energy, {} than the reference ({}); {}.</p>\n",
                        change_words(r.energy_vs_ref_pct, "less", "more"),
                        change_words(r.time_vs_ref_pct, "faster", "slower"),
                        escape_html(setting_words(ref.setting)), noise);
  }
  if (const std::string caveat = model.lead ? slowdown_caveat(*model.lead, CaveatStyle::kBoxSentence) : "";
      !caveat.empty())
    body += "<p class=\"edge\">&#9888; " + escape_html(caveat) + ".</p>\n";
  if (const std::string judged = model.lead ? curve_judgement(*model.lead, CaveatStyle::kBoxSentence) : "";
      !judged.empty()) {
    // With no repeats to tell whether the pick's one run is over by its noise, a warning; by their noise,
    // an explanation.
    const char* warning = analysis::slowdown_unknown(*model.lead) ? "&#9888; " : "";
    body += std::string("<p class=\"edge\">") + warning + escape_html(judged) + ".</p>\n";
  }
  if (model.lead && model.lead->unconstrained) {
    const auto& u = *model.lead->unconstrained;
    body += u.setting_index == r.setting_index
                ? fmt::format("<p class=\"unconstrained\">Without the {:g}% limit: the same setting.</p>\n",
                              *limit * 100)
                : fmt::format(
                      "<p class=\"unconstrained\">Without the {:g}% limit: {}, {} energy, {} than the "
                      "reference.</p>\n",
                      *limit * 100, escape_html(setting_words(u.setting)),
                      change_words(u.energy_vs_ref_pct, "less", "more"),
                      change_words(u.time_vs_ref_pct, "faster", "slower"));
  }
  for (const auto* rec : {&r, model.lead && model.lead->unconstrained ? &*model.lead->unconstrained : nullptr})
    if (rec && rec->decision.edge) {
      body += "<p class=\"edge\">&#9888; " + escape_html(rec->decision.edge_text()) + ".</p>\n";
      break;
    }
  body += "<p class=\"band\">" + escape_html(band_words(model, r)) + ".</p>\n";
  if (!keep) body += commands_html(model, r);
  return fmt::format(
      "<section id=\"recommendation\" class=\"recommendation\" data-metric=\"{}\" data-setting=\"{}\">"
      "<h2>Recommendation: {}</h2>\n{}</section>\n",
      escape_html(r.metric.name()), escape_html(model.settings.at(r.setting_index).label),
      keep ? "keep the current setting" : escape_html(setting_words(r.setting)), body);
}

std::string metric_definitions_html(const ReportModel& model) {
  if (model.settings.empty()) return "";
  const auto& ref = model.settings.at(model.reference_index);
  std::string eds;
  for (const auto& q : model.quantities)
    if (q.starts_with("EDS(")) eds += (eds.empty() ? "" : ", ") + escape_html(q);
  auto row = [](const std::string& term, const std::string& text) {
    return fmt::format("<dt>{}</dt><dd>{}</dd>\n", term, text);
  };
  std::string rows;
  rows +=
      row("reference",
          fmt::format("{} (E<sub>ref</sub> = {:.1f} J, t<sub>ref</sub> = {:.3f} s): the setting named with "
                      "<code>--reference</code>, else the sweep's default (the GPUs' default power limit), "
                      "else the highest power limit and the highest locked clocks measured.",
                      escape_html(setting_words(ref.setting)), ref.energy_j.mean, ref.time_s.mean));
  rows += row("E, t",
              "energy (J) of the job's GPUs and time (s) over what each run is judged on, the mean over "
              "the repeats; shown as E/E<sub>ref</sub> and t/t<sub>ref</sub>.");
  rows += row("EDP",
              "energy-delay product E&middot;t, as (E&middot;t)/(E<sub>ref</sub>&middot;t<sub>ref</sub>); "
              "lower is better; 1% more time costs as much as 1% more energy.");
  rows += row("ED2P",
              "E&middot;t&sup2;, as (E&middot;t&sup2;)/(E<sub>ref</sub>&middot;t<sub>ref</sub>&sup2;); "
              "lower is better; time counts twice.");
  rows += row("EDS(k)",
              "((k&minus;1)/k)&middot;E/E<sub>ref</sub> + (1/k)&middot;t/t<sub>ref</sub>; 1 at the "
              "reference, lower is better; k is the slowdown accepted for zero energy: 1% more time "
              "is worth (k&minus;1)% less energy (k = 2: 1% for 1%)." +
                  (eds.empty() ? std::string() : " Shown: " + eds + "."));
  rows += row("gain-loss",
              "100&middot;(1 &minus; E/E<sub>ref</sub>) &minus; 100&middot;(t/t<sub>ref</sub> "
              "&minus; 1): energy saved in % minus time lost in %; higher is better.");
  rows += row("band",
              "the settings whose metric is not distinguishable from the best one's (one-sided t-test "
              "at 95% on the per-run values, the noise of one run pooled over the settings); the pick "
              "is the fastest of them within 0.5% of the best.");
  rows += row("beyond the noise",
              "the pick differs from the reference on the metric by Welch's t-test at 95% on "
              "the per-run values.");
  return "<section id=\"definitions\"><h2>What the numbers mean</h2>\n<dl class=\"definitions\">\n" + rows +
         "</dl>\n</section>\n";
}

}  // namespace wattwise::report::html
