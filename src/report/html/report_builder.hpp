#pragma once

#include <cstddef>
#include <istream>
#include <vector>

#include "analysis/analysis.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

struct BuildOptions {
  std::size_t grid_points = 300;  // points of the common time grid the traces are resampled onto
};

// The report of a sweep: the analysis (aggregates, reference, Pareto front, recommendations) plus whatever
// per-run extras exist (traces, phases; runs without them are fine). Runs in `details` are matched to the
// analysis's settings by value; a detail whose setting is not in the analysis is ignored.
ReportModel build_report_model(const analysis::Analysis& analysis, const std::vector<RunDetail>& details,
                               const ReportInfo& info, const BuildOptions& options = {});

// The report of one measurement (`wattwise report trace.csv`): its power trace and phases, with energy and
// time taken from the trace itself. `phases_csv` may be null (no phases file beside the trace).
ReportModel build_report_model_from_trace(std::istream& trace_csv, std::istream* phases_csv,
                                          const ReportInfo& info, const BuildOptions& options = {});

}  // namespace wattwise::report::html
