#include "core/footprint.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/carbon_regions.hpp"
#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise {

namespace {

const char* const kAbsent = "n/a";

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string region_codes() {
  std::string codes;
  for (const auto& region : carbon_regions()) {
    if (!codes.empty()) codes.push_back(' ');
    codes.append(region.code);
  }
  return codes;
}

// Decimals that show three significant digits of `value` in fixed notation, at least `min_decimals`.
int significant_decimals(double value, int min_decimals) {
  if (value == 0 || !std::isfinite(value)) return min_decimals;
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  return std::clamp(2 - magnitude, min_decimals, 12);
}

}  // namespace

double energy_kwh(double energy_j) {
  return energy_j / kJoulesPerKwh;
}

Footprint footprint(double energy_j, const FootprintRates& rates) {
  Footprint f;
  f.energy_kwh = energy_kwh(energy_j);
  if (rates.carbon) f.co2e_g = f.energy_kwh * rates.carbon->g_per_kwh;
  if (rates.price) f.cost = f.energy_kwh * rates.price->per_kwh;
  return f;
}

Saving saving_against_reference(double ref_energy_j, double ref_time_s, double energy_j,
                                const FootprintRates& rates) {
  const double saved_j = ref_energy_j - energy_j;
  constexpr double kSecondsPerHour = 3600;
  // A reference that took no time has no rate of work; its hourly figure is 0, never infinite.
  const double per_hour_j = ref_time_s > 0 ? saved_j * kSecondsPerHour / ref_time_s : 0;
  return Saving{footprint(saved_j, rates), footprint(per_hour_j, rates)};
}

CarbonIntensity parse_carbon_intensity(const std::string& given, const std::string& source) {
  const std::string text = trimmed(given);
  if (const auto number = parse_number(text)) {
    if (*number < 0 || *number > kMaxCarbonIntensityGPerKwh)
      throw usage_error(fmt::format(
          "{} {} is out of range: give grams of CO2e per kWh, 0 to {:.0f} (e.g. 350), or a region such as DE",
          source, text, kMaxCarbonIntensityGPerKwh));
    return CarbonIntensity{*number, source, std::nullopt, std::nullopt};
  }
  const RegionIntensity* region = find_carbon_region(text);
  if (region == nullptr)
    throw usage_error(fmt::format(
        "{} '{}' is neither a number of gCO2e/kWh nor a region of the table: give e.g. 350, or one of: {}",
        source, text, region_codes()));
  return CarbonIntensity{region->g_per_kwh, source, std::string(region->code), region->year};
}

ElectricityPrice parse_price(const std::string& given, const std::string& source) {
  const std::string text = trimmed(given);
  // The amount is the longest number at the start (from_chars stops before "EUR", exponent or not);
  // what follows, spaces trimmed, is the currency.
  double amount = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), amount);
  std::string currency = error == std::errc() ? trimmed(std::string(end, text.data() + text.size())) : "";
  const bool currency_ok =
      currency.empty() || (currency.size() == 3 && std::ranges::all_of(currency, [](char c) {
                             return std::isalpha(static_cast<unsigned char>(c)) != 0;
                           }));
  if (error != std::errc() || !std::isfinite(amount) || !currency_ok)
    throw usage_error(fmt::format(
        "{} '{}' is not a price: give the amount per kWh, optionally with a 3-letter currency code, e.g. "
        "0.30EUR or 0.12",
        source, text));
  if (amount < 0 || amount > kMaxPricePerKwh)
    throw usage_error(fmt::format("{} {} is out of range: give the price per kWh, 0 to {:.0f} (e.g. 0.30EUR)",
                                  source, text, kMaxPricePerKwh));
  std::ranges::transform(currency, currency.begin(), [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  });
  return ElectricityPrice{amount, currency, source};
}

std::string format_kwh(std::optional<double> kwh) {
  if (!kwh) return kAbsent;
  return fmt::format("{:.{}f} kWh", *kwh, significant_decimals(*kwh, 0));
}

std::string format_co2e_g(std::optional<double> grams) {
  if (!grams) return kAbsent;
  const double g = *grams;
  if (std::fabs(g) >= 1e6) return fmt::format("{:.{}f} tCO2e", g / 1e6, significant_decimals(g / 1e6, 0));
  if (std::fabs(g) >= 1e3) return fmt::format("{:.{}f} kgCO2e", g / 1e3, significant_decimals(g / 1e3, 0));
  return fmt::format("{:.{}f} gCO2e", g, significant_decimals(g, 0));
}

std::string format_cost(std::optional<double> amount, const std::string& currency) {
  if (!amount) return kAbsent;
  const std::string number = fmt::format("{:.{}f}", *amount, significant_decimals(*amount, 2));
  return currency.empty() ? number : number + " " + currency;
}

std::string describe_carbon_intensity(const CarbonIntensity& carbon) {
  const std::string value = fmt::format("{:g} gCO2e/kWh", carbon.g_per_kwh);
  if (!carbon.region) return fmt::format("{}, from {}", value, carbon.source);
  return fmt::format("{}: {}, Ember {}, from {}", value, *carbon.region, carbon.data_year.value_or(0),
                     carbon.source);
}

std::string describe_price(const ElectricityPrice& price) {
  const std::string currency = price.currency.empty() ? "" : " " + price.currency;
  return fmt::format("{:g}{}/kWh, from {}", price.per_kwh, currency, price.source);
}

}  // namespace wattwise
