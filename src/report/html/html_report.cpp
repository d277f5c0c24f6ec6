#include "report/html/html_report.hpp"

#include "report/html/html_escape.hpp"
#include "report/html/html_footprint.hpp"
#include "report/html/report_tune.hpp"

#include <fmt/format.h>

#include <set>

#include "core/json_text.hpp"
#include "report/html/embedded.hpp"
#include "report/html/report_json.hpp"
#include "report/html/report_recommend.hpp"
#include "report/html/report_single_run.hpp"
#include "report/html/report_tables.hpp"

namespace wattwise::report::html {

namespace {

// JSON inside <script> must not close the element nor open a comment or another script ("<!--", "<script"
// change how HTML parses what follows): every '<' becomes \u003c, which JSON reads back the same. In JSON
// text '<' can only occur inside strings, so this never touches the structure.
std::string script_safe_json(const ReportModel& model) {
  const std::string text = json_text(to_json(model));  // replaces, never throws on a stray byte
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    if (ch == '<')
      out += "\\u003c";
    else
      out += ch;
  }
  return out;
}

// Installed before any other script runs, so errors in Chart.js or in the page's own script are counted.
constexpr const char* kErrorCounter =
    "window.addEventListener('error', function () { var b = document.body; "
    "b.dataset.jsErrors = String(Number(b.dataset.jsErrors || 0) + 1); });";

bool has_knob_fit(const ReportModel& model, const std::string& knob) {
  for (const auto& f : model.fits)
    if (f.knob == knob) return true;
  return false;
}

std::string chart(const std::string& id, const std::string& caption) {
  return fmt::format(
      "<figure class=\"chart\"><div class=\"canvas-box\"><canvas id=\"{}\"></canvas></div>"
      "<figcaption>{}</figcaption></figure>\n",
      id, caption);
}

std::string section(const std::string& id, const std::string& title, const std::string& body) {
  return fmt::format("<section id=\"{}\"><h2>{}</h2>\n{}</section>\n", id, title, body);
}

std::string header_html(const ReportModel& model) {
  const auto& info = model.info;
  std::string facts;
  auto fact = [&](const char* name, const std::string& value) {
    if (!value.empty()) facts += fmt::format("<dt>{}</dt><dd>{}</dd>", name, escape_html(value));
  };
  fact("source", info.source);
  fact("command", info.command);
  fact("GPU", info.gpu);
  fact("energy measured with", info.method);
  fact("wattwise", info.tool_version);
  if (!model.settings.empty() && !model.single_run)
    fact("reference", model.settings.at(model.reference_index).label);
  fact("analysis", analysis::basis_text(model.basis));
  fact("energy", analysis::scope_text(model.scope));
  std::string warnings;
  if (const std::string warning = analysis::startup_warning(model.basis); !warning.empty())
    warnings += "<p class=\"warning\">" + escape_html(warning) + "</p>";
  for (const auto& line : model.scope_warnings)
    warnings += "<p class=\"warning\">The energy scopes pick differently for " + escape_html(line) + "</p>";
  return fmt::format("<header><h1>{}</h1><dl class=\"facts\">{}</dl>{}</header>\n", escape_html(info.title),
                     facts, warnings);
}

std::string table_html(const ReportModel& model) {
  // Node energy columns only where the sweep measured it (docs/node-power.md).
  bool cpu_dram = false, meter = false, bar = false;
  for (const auto& row : model.table) {
    bar = bar || row.energy_uncertainty_j.has_value();  // the measurement's error bar (docs/report.md)
    cpu_dram = cpu_dram || row.node_cpu_dram_j.has_value();
    meter = meter || row.node_meter_j.has_value();
  }
  std::string rows;
  for (const auto& row : model.table) {
    std::string optimum;
    for (const auto& m : row.optimum_for) optimum += (optimum.empty() ? "" : ", ") + escape_html(m);
    const bool reference = row.setting_index == model.reference_index;
    std::string node;
    if (cpu_dram) node += fmt::format("<td>{}</td>", table_number(row.node_cpu_dram_j, 1));
    if (meter) node += fmt::format("<td>{}</td>", table_number(row.node_meter_j, 1));
    const std::string bar_cell =
        bar ? fmt::format("<td>{}</td>", table_number(row.energy_uncertainty_j, 1)) : std::string();
    rows += fmt::format(
        "<tr{}><td>{}{}</td><td>{}</td><td>{}</td>{}<td>{}</td><td>{}</td><td>{}</td>{}<td>{}</td></tr>\n",
        reference ? " class=\"reference\"" : "", escape_html(row.setting), reference ? " (reference)" : "",
        table_number(row.power_w, 1), table_number(row.energy_j, 1), bar_cell, table_percent(row.energy_vs_ref_pct),
        table_number(row.time_s, 3), table_percent(row.time_vs_ref_pct), node, optimum);
  }
  const std::string node_headers =
      std::string(cpu_dram ? "<th>node CPU+DRAM (J)</th>" : "") + (meter ? "<th>node meter (J)</th>" : "");
  return std::string("<table class=\"results\"><thead><tr><th>setting</th><th>avg power (W)</th><th>energy (J)</th>") +
         (bar ? "<th>meas. ± (J)</th>" : "") + "<th>energy vs ref (%)</th><th>time (s)</th><th>time vs ref (%)</th>" +
         node_headers + "<th>optimum for</th></tr></thead><tbody>\n" + rows + "</tbody></table>\n";
}

// The settings not distinguishable from the best, and how the pick was made among them.
std::string band_html(const ReportModel& model, const analysis::Recommendation& r) {
  if (!r.band_known) return "<br><span class=\"band\">band unknown: no repeats</span>";
  if (r.band.size() == 1) return "<br><span class=\"band\">no other setting within the noise</span>";
  std::string labels;
  for (const auto& member : r.band)
    labels += (labels.empty() ? "" : ", ") + escape_html(model.settings.at(member.setting_index).label);
  return fmt::format(
      "<br><span class=\"band\">within the noise of the best ({}, one-sided t at 95% on the pooled noise): "
      "{}; "
      "picked the {}</span>",
      escape_html(model.settings.at(r.best_index).label), labels, escape_html(r.tie_rule));
}

std::string recommendations_html(const ReportModel& model) {
  if (model.recommendations.empty() || model.single_run) return "";
  std::string items;
  for (std::size_t k = 0; k < model.recommendations.size(); ++k) {
    const auto& r = model.recommendations[k];
    const std::string noise =
        r.significant ? (*r.significant ? "beyond the noise" : "within the noise") : "noise unknown";
    const std::string other =
        k < model.other_scope_picks.size()
            ? fmt::format("<br><span class=\"band\">on the {} energy: {}</span>",
                          model.scope.scope == analysis::EnergyScope::kNode ? "job's GPUs'" : "node's",
                          escape_html(model.other_scope_picks[k]))
            : std::string();
    // Under "only settings at most X% slower qualify", a pick whose own mean is over it says the figure it
    // qualified on.
    const std::string curve =
        analysis::within_on_the_curve_only(r, model.max_slowdown)
            ? fmt::format(
                  "; {}% on the time curve through its neighbours' runs, on which the limit is judged",
                  table_percent(r.time_vs_ref_curve_pct))
            : std::string();
    items += fmt::format("<li><b>{}</b>: {} &mdash; energy {}%, time {}% ({}{}){}{}</li>\n",
                         escape_html(r.metric.name()), escape_html(model.settings.at(r.setting_index).label),
                         table_percent(r.energy_vs_ref_pct), table_percent(r.time_vs_ref_pct), noise, curve,
                         band_html(model, r), other);
  }
  const std::string headline = model.headline < model.recommendations.size()
                                   ? model.recommendations[model.headline].metric.name()
                                   : "";
  const std::string limit =
      model.max_slowdown
          ? fmt::format("; only settings at most {:g}% slower than the reference qualify "
                        "(<code>--max-slowdown {:g}%</code>)",
                        *model.max_slowdown * 100, *model.max_slowdown * 100)
          : std::string();
  return "<p class=\"note\">The best setting for each metric" + limit +
         "; the recommendation at the top is the one for " + escape_html(headline) +
         (model.lead && model.lead->max_slowdown
              ? fmt::format(" at most {:g}% slower than the reference", *model.lead->max_slowdown * 100)
              : std::string()) +
         " (<code>--metric</code>, <code>--max-slowdown</code>).</p>\n<ul class=\"recommendations\">\n" +
         items + "</ul>\n";
}

// The fits in numbers: how well each quadratic fits, where the fitted curve is lowest, where the measured
// means are lowest, and the results' recommendation, so a fitted minimum between two measured settings is
// never read as the recommendation.
std::string fits_table_html(const ReportModel& model, const std::string& knob) {
  std::string rows;
  for (const auto& f : model.fits) {
    if (f.knob != knob) continue;
    rows += fmt::format(
        "<tr><td>{}</td><td>{:.4f}</td><td>{:.4g}</td><td>{:.4f}</td><td>{:.4g}</td><td>{:.4f}</td>"
        "<td class=\"recommended\">{}</td></tr>\n",
        escape_html(f.metric), f.fit.r_squared, f.fit.optimum_x, f.fit.optimum_y, f.measured_optimum_x,
        f.measured_optimum_y, f.recommended_x ? fmt::format("{:.4g}", *f.recommended_x) : "n/a");
  }
  return fmt::format(
      "<table class=\"results fits\"><thead><tr><th>quantity (normalised)</th><th>R&sup2;</th>"
      "<th>fitted curve's minimum {0} (not a recommendation)</th><th>fitted value</th>"
      "<th>lowest measured mean {0}</th><th>measured value</th><th>recommended {0} (results)</th>"
      "</tr></thead><tbody>\n{1}</tbody></table>\n"
      "<p class=\"note\">The recommendation comes from the measured results (Results table), not from "
      "these fits. The fitted curve's minimum is where a quadratic through the means is lowest; it can lie "
      "between the settings measured. The recommended setting can differ from the lowest measured mean: it "
      "is the fastest setting within 0.5% of the best among those not distinguishable from it.</p>\n",
      escape_html(knob), rows);
}

}  // namespace

std::vector<std::string> chart_ids(const ReportModel& model) {
  std::vector<std::string> ids;
  if (model.settings.size() >= 2) {
    for (const auto& knob : model.knobs) ids.push_back("chart-knob-" + knob);
    ids.push_back("chart-plane");
  }
  if (!model.traces.empty()) {
    ids.push_back("chart-power");
    ids.push_back("chart-energy");
  }
  if (!model.phases.phase_names.empty()) {
    ids.push_back("chart-phase-time");
    ids.push_back("chart-phase-energy");
  }
  for (const auto& knob : model.knobs)
    if (has_knob_fit(model, knob)) ids.push_back("chart-fit-" + knob);
  return ids;
}

std::string render_html_report(const ReportModel& model) {
  const auto ids = chart_ids(model);
  const std::set<std::string> present(ids.begin(), ids.end());
  std::string body = header_html(model);
  body += recommendation_box_html(model);
  const bool one_run = model.single_run.has_value();
  if (!one_run) body += metric_definitions_html(model);

  if (present.contains("chart-plane")) {
    std::string knob_charts;
    for (const auto& knob : model.knobs)
      knob_charts +=
          chart("chart-knob-" + knob,
                fmt::format("Normalised to the reference against {}; points are the metric on the means, "
                            "bars one standard deviation of the repeats.",
                            escape_html(knob)));
    body += section("per-knob", "Power, energy, time, EDP and EDS against each knob", knob_charts);
    body +=
        section("plane", "Energy against time",
                chart("chart-plane",
                      "One point per setting (bars: one standard deviation), the Pareto front, and where E, "
                      "EDP and EDS(k) equal the reference's: below a line the setting beats the reference."));
  }
  if (present.contains("chart-power") && one_run)
    body += section("traces", "Power and energy over time",
                    chart("chart-power",
                          "Power of each GPU and of all GPUs together, from 0 W; shaded: the job's phases, "
                          "named at the top.") +
                        chart("chart-energy", "Cumulative energy of all GPUs (trapezoid of the power)."));
  else if (present.contains("chart-power"))
    body += section("traces", "Power and energy over time",
                    chart("chart-power", "Mean power across the repeats of each setting.") +
                        chart("chart-energy",
                              "Cumulative energy, mean &plusmn; one standard deviation across repeats, "
                              "resampled onto one grid (averaged only where runs have data)."));
  if (present.contains("chart-phase-time"))
    body += section("phases", "Phases",
                    chart("chart-phase-time", one_run ? "Time per phase, summed over its occurrences."
                                                      : "Time per phase, mean over repeats.") +
                        chart("chart-phase-energy", one_run ? "Energy per phase, summed over its occurrences."
                                                            : "Energy per phase, mean over repeats."));
  std::string fits;
  for (const auto& knob : model.knobs)
    if (present.contains("chart-fit-" + knob))
      fits += chart("chart-fit-" + knob,
                    "Quadratic least-squares fits through the normalised means; R&sup2; in the "
                    "legend; hollow circles: the fitted curve's minimum, filled triangles: the lowest "
                    "measured mean.") +
              fits_table_html(model, knob);
  if (!fits.empty()) body += section("fits", "Fits", fits);
  if (model.tune) body += section("tune", "Tuning", tune_section_html(*model.tune));
  body += footprint_section_html(model);
  body += section("tables", "Results",
                  one_run ? single_run_summary_html(model) : recommendations_html(model) + table_html(model));

  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"wattwise {}\">\n<title>{}</title>\n<style>\n{}\n</style>\n</head>\n"
      "<body data-charts-expected=\"{}\" data-js-errors=\"0\">\n<script>{}</script>\n{}"
      "<script type=\"application/json\" id=\"wattwise-data\">{}</script>\n"
      "<script>\n{}\n</script>\n<script>\n{}\n</script>\n</body>\n</html>\n",
      escape_html(model.info.tool_version), escape_html(model.info.title), embedded::report_css(), ids.size(),
      kErrorCounter, body, script_safe_json(model), embedded::chartjs(), embedded::report_js());
}

}  // namespace wattwise::report::html
