#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/resample.hpp"
#include "report/html/html_escape.hpp"
#include "report/html/report_parts.hpp"
#include "report/html/report_single_run.hpp"
#include "report/html/report_tables.hpp"

namespace wattwise::report::html {

namespace {

// A phase that occurs more often than this (iterations, steps) would paint the chart solid: it is listed
// in the phase table instead of shaded.
constexpr std::size_t kMaxShadedOccurrences = 12;

std::vector<std::optional<double>> on_grid(const analysis::TimeSeries& s, const std::vector<double>& grid) {
  return analysis::resample_linear(s, grid);
}

void fill_spans(SingleRun& single, const RunDetail& run) {
  std::map<std::string, std::size_t> occurrences;
  for (const auto& p : run.phase_spans) ++occurrences[p.name];
  for (const auto& p : run.phase_spans) {
    if (occurrences[p.name] > kMaxShadedOccurrences) {
      if (std::find(single.unshaded.begin(), single.unshaded.end(), p.name) == single.unshaded.end())
        single.unshaded.push_back(p.name);
      continue;
    }
    single.spans.push_back(p);
  }
}

}  // namespace

void fill_single_run(ReportModel& model, const std::vector<RunDetail>& details) {
  model.single_run.reset();
  if (model.settings.size() != 1 || model.settings.front().repeats != 1 || details.size() != 1) return;
  const RunDetail& run = details.front();
  SingleRun single;
  if (!model.grid_s.empty()) {
    for (const auto& gpu : run.gpu_power_w) {
      single.series.push_back(fmt::format("GPU {}", gpu.gpu));
      single.power_w.push_back(on_grid(gpu.power_w, model.grid_s));
      single.gpu_energy_j.push_back(analysis::cumulative_energy_j(gpu.power_w).value.back());
    }
    // One GPU's trace is the sum already: drawing it twice would only hide one line under the other.
    if (run.power_w && run.gpu_power_w.size() != 1) {
      single.series.push_back("all GPUs");
      single.power_w.push_back(on_grid(*run.power_w, model.grid_s));
    }
  }
  fill_spans(single, run);
  model.single_run = std::move(single);
}

std::string single_run_summary_html(const ReportModel& model) {
  if (!model.single_run || model.settings.empty()) return "";
  const auto& run = model.settings.front();
  const auto& single = *model.single_run;
  std::string rows = fmt::format("<tr><td>all GPUs</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                                 table_number(run.energy_j.mean, 1), table_number(run.time_s.mean, 3),
                                 table_number(run.power_w.mean, 1));
  if (single.gpu_energy_j.size() > 1)
    for (std::size_t i = 0; i < single.gpu_energy_j.size(); ++i) {
      const auto& energy = single.gpu_energy_j[i];
      const std::optional<double> power =
          energy && run.time_s.mean > 0 ? std::optional(*energy / run.time_s.mean) : std::nullopt;
      rows += fmt::format("<tr><td>{}</td><td>{}</td><td></td><td>{}</td></tr>\n",
                          escape_html(single.series[i]), table_number(energy, 1), table_number(power, 1));
    }
  std::string out =
      "<table class=\"results single-run\"><thead><tr><th>GPUs</th><th>energy (J)</th><th>time (s)</th>"
      "<th>avg power (W)</th></tr></thead><tbody>\n" +
      rows + "</tbody></table>\n";
  if (single.gpu_energy_j.size() > 1)
    out +=
        "<p class=\"note\">Per GPU: the trapezoid integral of its own power trace over the same "
        "window.</p>\n";
  if (!single.unshaded.empty()) {
    std::string names;
    for (const auto& n : single.unshaded) names += (names.empty() ? "" : ", ") + escape_html(n);
    out += fmt::format(
        "<p class=\"note\">Not shaded (more than {} occurrences): {}; see the phase charts.</p>\n",
        kMaxShadedOccurrences, names);
  }
  return out;
}

}  // namespace wattwise::report::html
