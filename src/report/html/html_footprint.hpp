#pragma once

#include <string>

#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// The report's block "Energy in kWh, CO2e and cost" (docs/footprint.md): a single run's energy in kWh,
// or for a sweep the reference's energy per run and what each recommendation saves against it, per run and
// per hour of the reference's work; CO2e and cost only where model.footprint has a carbon intensity or a
// price (the rates come from `wattwise report --carbon-intensity/--price`, the environment or the config
// file). Empty when the model has no setting.
std::string footprint_section_html(const ReportModel& model);

}  // namespace wattwise::report::html
