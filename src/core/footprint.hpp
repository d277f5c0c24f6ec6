#pragma once

#include <optional>
#include <string>

namespace wattwise {

// Energy in the units people report it in: kWh, and, where the user gave a carbon intensity and an
// electricity price, grams of CO2e and money (docs/footprint.md). The arithmetic is one multiplication
// each; it lives here once so that measure, analyze, sweep and the report cannot disagree.

inline constexpr double kJoulesPerKwh = 3.6e6;

// Bounds of what a user can mean: 0 g/kWh is a real contract (own renewables); the dirtiest national grid
// is ~1300 g/kWh, so 2000 catches gCO2e/MWh typed where g/kWh was asked. A price above 100 per kWh is a
// price per MWh.
inline constexpr double kMaxCarbonIntensityGPerKwh = 2000;
inline constexpr double kMaxPricePerKwh = 100;

struct CarbonIntensity {
  double g_per_kwh = 0;
  std::string source;                 // where the setting came from: "--carbon-intensity", "WATTWISE_..."
  std::optional<std::string> region;  // the region named ("DE", "world"), when the table gave the figure
  std::optional<int> data_year;       // the year the table's figure describes
};

struct ElectricityPrice {
  double per_kwh = 0;
  std::string currency;  // ISO 4217 code in upper case ("EUR"); empty when the user gave none
  std::string source;
};

// What the user asked for; either may be absent (then only kWh is shown, never an invented default).
struct FootprintRates {
  std::optional<CarbonIntensity> carbon;
  std::optional<ElectricityPrice> price;
};

struct Footprint {
  double energy_kwh = 0;
  std::optional<double> co2e_g;  // absent without a carbon intensity
  std::optional<double> cost;    // in the price's currency; absent without a price
};

double energy_kwh(double energy_j);
Footprint footprint(double energy_j, const FootprintRates& rates);

// What a setting saves against the reference (negative: it costs more): per run, i.e. per unit of the
// job's work, and per hour of the reference's work (the work the reference does in one hour, done at the
// setting instead: (E_ref - E) * 3600 s / t_ref).
struct Saving {
  Footprint per_run;
  Footprint per_hour;
};
Saving saving_against_reference(double ref_energy_j, double ref_time_s, double energy_j,
                                const FootprintRates& rates);

// "350" (gCO2e/kWh) or a region of the table ("DE", "world", case-insensitive). `source` names where the
// text came from, for the error message and the output. A negative, too large or unknown value is a
// usage_error naming the source and what to give instead.
CarbonIntensity parse_carbon_intensity(const std::string& text, const std::string& source);

// "0.30", "0.30EUR", "0.30 eur": an amount per kWh, optionally followed by a three-letter currency code.
ElectricityPrice parse_price(const std::string& text, const std::string& source);

// For people. kWh with three significant digits ("0.0191 kWh", "2.43 kWh", "1520 kWh"); grams of CO2e in
// g, kg or t ("7.27 gCO2e", "1.52 kgCO2e"); money with at least two decimals and three significant
// digits ("0.0057 EUR", "12.40 EUR"). Absent values print as "n/a".
std::string format_kwh(std::optional<double> kwh);
std::string format_co2e_g(std::optional<double> grams);
std::string format_cost(std::optional<double> amount, const std::string& currency);

// Where a figure came from, for a summary line: "381 gCO2e/kWh: DE, Ember 2023, from --carbon-intensity"
// and "0.30 EUR/kWh, from WATTWISE_PRICE".
std::string describe_carbon_intensity(const CarbonIntensity& carbon);
std::string describe_price(const ElectricityPrice& price);

}  // namespace wattwise
