#pragma once

#include <span>
#include <string_view>

namespace wattwise {

// Average carbon intensity of a country's (or region's) electricity generation, for people who name a
// region instead of giving their own figure (docs/footprint.md, "The region table").
//
// Source: Ember, Yearly Electricity Data, column emissions_intensity_gco2_per_kwh (lifecycle gCO2e per kWh
// generated, production mix, imports not included): https://ember-energy.org/data/yearly-electricity-data/
// (CC BY 4.0). Each region carries the latest year Ember had a figure for in its 2024 release (2023 for
// most of Europe, 2022 elsewhere), as compiled from Ember's API by the Green Web Foundation's co2.js
// (data/output/average-intensities.json); the 2023 European values agree with Our World in Data's
// "Carbon intensity of electricity generation" table
// (https://ourworldindata.org/grapher/carbon-intensity-electricity). No network at run time: these numbers
// are compiled in, and dated, so a user can tell how old they are.
struct RegionIntensity {
  std::string_view code;  // ISO 3166-1 alpha-2 in upper case, or "world" / "eu"
  std::string_view name;
  double g_per_kwh = 0;
  int year = 0;  // the year the figure describes
};

inline constexpr std::string_view kCarbonRegionsSource =
    "Ember, Yearly Electricity Data (https://ember-energy.org/data/yearly-electricity-data/)";

// Every region, the two aggregates ("world", "eu") first, then countries by code.
std::span<const RegionIntensity> carbon_regions();

// By code, case-insensitive ("de", "DE", "World"); nullptr when the table has no such region.
const RegionIntensity* find_carbon_region(std::string_view code);

}  // namespace wattwise
