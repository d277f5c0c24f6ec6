#pragma once

#include <string>
#include <vector>

#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// One self-contained HTML file: the data as one JSON blob, Chart.js and the page's own script embedded, so
// it opens with no network. After drawing, the page's script sets <body data-charts-drawn="N"> (charts with
// data drawn) and data-js-errors (count of uncaught errors), which the end-to-end test reads.
std::string render_html_report(const ReportModel& model);

// The ids of the chart canvases the page has for this model (charts without data are left out):
// chart-knob-<knob>, chart-plane, chart-power, chart-energy, chart-phase-time, chart-phase-energy,
// chart-fit-<knob>.
std::vector<std::string> chart_ids(const ReportModel& model);

}  // namespace wattwise::report::html
