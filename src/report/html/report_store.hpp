#pragma once

#include <filesystem>

#include "analysis/analysis.hpp"
#include "report/html/report_builder.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// `wattwise report DB`: the report of a sweep database (docs/results-schema.md). Runs are read with
// store::read_analysis_runs, as `wattwise analyze` reads them, so both agree; the reference is
// options.reference, else the plan's reference, as analyze does. Phases come from run_phases, power traces
// from the optional traces table. Errors opening the database are those of store::ResultsStore (usage/data
// errors with a message).
ReportModel build_report_model_from_store(const std::filesystem::path& db,
                                          const analysis::AnalysisOptions& options = {},
                                          const BuildOptions& build = {});

}  // namespace wattwise::report::html
