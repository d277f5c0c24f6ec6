#pragma once

#include <vector>

#include "report/html/report_builder.hpp"
#include "report/html/report_model.hpp"

// The builder's steps, one file each; internal to ww_report_html, declared here so tests can reach them.
namespace wattwise::report::html {

// settings, normalised quantities, Pareto front, iso-lines, table (report_settings.cpp)
void fill_settings(ReportModel& model, const analysis::Analysis& analysis);

// the common grid, per-setting power and cumulative energy (report_traces.cpp)
void fill_traces(ReportModel& model, const std::vector<RunDetail>& details, const BuildOptions& options);

// per-setting mean time and energy per phase (report_traces.cpp)
void fill_phases(ReportModel& model, const std::vector<RunDetail>& details);

// quadratic fits of E, t and EDP against each knob with three or more values (report_fits.cpp)
void fill_fits(ReportModel& model);

// per-setting mean node energy (CPU+DRAM, meter) in the table rows (report_node.cpp)
void fill_node(ReportModel& model, const std::vector<RunDetail>& details);

// one setting measured once: per-GPU power and their sum on the grid, the phases to shade
// (report_single_run.cpp); after fill_traces, which makes the grid
void fill_single_run(ReportModel& model, const std::vector<RunDetail>& details);

// Index of the setting `setting` names in model.settings, or model.settings.size() when none.
std::size_t find_setting(const ReportModel& model, const analysis::Setting& setting);

}  // namespace wattwise::report::html
