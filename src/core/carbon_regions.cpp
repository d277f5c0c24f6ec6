#include "core/carbon_regions.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace wattwise {

namespace {

// gCO2e/kWh and the year of the figure, from Ember's Yearly Electricity Data (carbon_regions.hpp says
// which release and how it was cross-checked). A country is here when large data centres or GPU clusters
// are common there; others are one line each to add, with their year.
constexpr std::array kRegions = {
    RegionIntensity{"world", "World", 485.99, 2022},
    RegionIntensity{"eu", "European Union", 243.83, 2023},
    RegionIntensity{"AE", "United Arab Emirates", 561.14, 2022},
    RegionIntensity{"AR", "Argentina", 394.62, 2022},
    RegionIntensity{"AT", "Austria", 110.81, 2023},
    RegionIntensity{"AU", "Australia", 570.35, 2022},
    RegionIntensity{"BE", "Belgium", 138.11, 2023},
    RegionIntensity{"BG", "Bulgaria", 335.33, 2023},
    RegionIntensity{"BR", "Brazil", 105.51, 2022},
    RegionIntensity{"CA", "Canada", 161.43, 2022},
    RegionIntensity{"CH", "Switzerland", 34.84, 2023},
    RegionIntensity{"CL", "Chile", 353.52, 2022},
    RegionIntensity{"CN", "China", 585.82, 2022},
    RegionIntensity{"CZ", "Czechia", 449.72, 2023},
    RegionIntensity{"DE", "Germany", 380.95, 2023},
    RegionIntensity{"DK", "Denmark", 151.65, 2023},
    RegionIntensity{"EE", "Estonia", 416.67, 2023},
    RegionIntensity{"ES", "Spain", 174.05, 2023},
    RegionIntensity{"FI", "Finland", 79.16, 2023},
    RegionIntensity{"FR", "France", 56.04, 2023},
    RegionIntensity{"GB", "United Kingdom", 237.59, 2023},
    RegionIntensity{"GR", "Greece", 336.57, 2023},
    RegionIntensity{"HK", "Hong Kong", 699.50, 2022},
    RegionIntensity{"HR", "Croatia", 204.96, 2023},
    RegionIntensity{"HU", "Hungary", 204.19, 2023},
    RegionIntensity{"ID", "Indonesia", 675.93, 2022},
    RegionIntensity{"IE", "Ireland", 290.81, 2023},
    RegionIntensity{"IL", "Israel", 582.93, 2022},
    RegionIntensity{"IN", "India", 705.13, 2022},
    RegionIntensity{"IS", "Iceland", 27.68, 2022},
    RegionIntensity{"IT", "Italy", 330.72, 2023},
    RegionIntensity{"JP", "Japan", 512.81, 2022},
    RegionIntensity{"KR", "South Korea", 441.65, 2022},
    RegionIntensity{"LT", "Lithuania", 160.07, 2023},
    RegionIntensity{"LU", "Luxembourg", 105.26, 2023},
    RegionIntensity{"LV", "Latvia", 123.20, 2023},
    RegionIntensity{"MX", "Mexico", 475.36, 2022},
    RegionIntensity{"MY", "Malaysia", 605.83, 2022},
    RegionIntensity{"NL", "Netherlands", 267.62, 2023},
    RegionIntensity{"NO", "Norway", 30.08, 2023},
    RegionIntensity{"NZ", "New Zealand", 110.89, 2022},
    RegionIntensity{"PL", "Poland", 661.93, 2023},
    RegionIntensity{"PT", "Portugal", 165.55, 2023},
    RegionIntensity{"RO", "Romania", 240.58, 2023},
    RegionIntensity{"RU", "Russia", 436.28, 2022},
    RegionIntensity{"SA", "Saudi Arabia", 706.79, 2022},
    RegionIntensity{"SE", "Sweden", 40.70, 2023},
    RegionIntensity{"SG", "Singapore", 474.00, 2022},
    RegionIntensity{"SI", "Slovenia", 231.28, 2023},
    RegionIntensity{"SK", "Slovakia", 116.77, 2023},
    RegionIntensity{"TR", "Türkiye", 464.59, 2023},
    RegionIntensity{"TW", "Taiwan", 639.53, 2022},
    RegionIntensity{"US", "United States", 385.98, 2022},
    RegionIntensity{"ZA", "South Africa", 729.67, 2022},
};

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::span<const RegionIntensity> carbon_regions() {
  return kRegions;
}

const RegionIntensity* find_carbon_region(std::string_view code) {
  for (const auto& region : kRegions)
    if (same_ignoring_case(region.code, code)) return &region;
  return nullptr;
}

}  // namespace wattwise
