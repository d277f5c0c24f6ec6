#pragma once

#include <string>

#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// The single-run page's numbers: energy, time and average power of all GPUs, then of each GPU, and which
// phases are too frequent to shade. Empty when the model is not one run (model.single_run absent).
std::string single_run_summary_html(const ReportModel& model);

}  // namespace wattwise::report::html
