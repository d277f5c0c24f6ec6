#pragma once

#include <nlohmann/json.hpp>

#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// The one JSON blob the page draws every chart from. Absent values are null, never 0. Field names carry
// units where they have one; docs/report.md lists them.
nlohmann::json to_json(const ReportModel& model);

}  // namespace wattwise::report::html
