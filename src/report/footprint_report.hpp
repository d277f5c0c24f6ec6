#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/analysis.hpp"
#include "core/footprint.hpp"

namespace wattwise::report {

// What each recommended setting saves against the reference, in kWh and, where the user gave a carbon
// intensity or a price, in CO2e and money: per run and per hour of the reference's work
// (core/footprint.hpp, saving_against_reference). For `analyze` and `sweep` (docs/footprint.md).
std::string savings_text(const analysis::Analysis& a, const FootprintRates& rates);

// The same for `analyze --json`: each element of `recommendations` gets a "saving" object and the top
// level a "footprint" object with the rates used (docs/analysis-json.md).
void add_savings_json(nlohmann::json& analysis_json, const analysis::Analysis& a,
                      const FootprintRates& rates);

// The footprint fields of measure's JSON for `energy_j` (null: every field null but the rates):
// energy_kwh, co2e_g, carbon_intensity {g_per_kwh, source, region, data_year}, cost {amount, currency,
// price_per_kwh, source}.
nlohmann::json footprint_json(std::optional<double> energy_j, const FootprintRates& rates);

// The summary's lines under "energy" for CO2e and cost; empty without rates.
std::string footprint_summary_lines(std::optional<double> energy_j, const FootprintRates& rates);

// The rates as measure's JSON and the report carry them: {carbon_intensity, price}, each null when not
// given.
nlohmann::json rates_json(const FootprintRates& rates);

}  // namespace wattwise::report
