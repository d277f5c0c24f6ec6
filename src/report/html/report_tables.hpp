#pragma once

#include <string>

#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// The studies' table (setting, average power, total energy and time, each against the reference, and the
// metrics each setting is the optimum for), then the recommendations, as GitHub Markdown.
std::string render_tables_markdown(const ReportModel& model);

// The same table for programs: one column per knob, then power_w, energy_j, energy_vs_ref_pct, time_s,
// time_vs_ref_pct, reference (0/1), optimum_for (metric names separated by ';'). Absent values are empty.
std::string render_tables_csv(const ReportModel& model);

// Cell texts shared by the Markdown and HTML tables: "n/a" when absent.
std::string table_number(const std::optional<double>& value, int decimals);
std::string table_percent(const std::optional<double>& value);

}  // namespace wattwise::report::html
