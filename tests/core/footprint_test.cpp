// The footprint arithmetic, the parsing of --carbon-intensity and --price, and the region table.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "core/carbon_regions.hpp"
#include "core/error.hpp"
#include "core/footprint.hpp"

namespace wattwise {
namespace {

int usage_exit_code(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.exit_code();
  }
  return 0;
}

std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Footprint, OneKilowattHourIsThreePointSixMegajoules) {
  EXPECT_DOUBLE_EQ(energy_kwh(3.6e6), 1.0);
  EXPECT_DOUBLE_EQ(energy_kwh(68'680), 68'680 / 3.6e6);
}

TEST(Footprint, WithoutRatesOnlyKilowattHoursAreComputed) {
  const Footprint f = footprint(7.2e6, {});
  EXPECT_DOUBLE_EQ(f.energy_kwh, 2.0);
  EXPECT_FALSE(f.co2e_g.has_value());
  EXPECT_FALSE(f.cost.has_value());
}

TEST(Footprint, Co2eAndCostAreKilowattHoursTimesTheRates) {
  FootprintRates rates;
  rates.carbon = CarbonIntensity{400, "--carbon-intensity", std::nullopt, std::nullopt};
  rates.price = ElectricityPrice{0.25, "EUR", "--price"};
  const Footprint f = footprint(1.8e6, rates);  // 0.5 kWh
  EXPECT_DOUBLE_EQ(f.energy_kwh, 0.5);
  ASSERT_TRUE(f.co2e_g.has_value());
  EXPECT_DOUBLE_EQ(*f.co2e_g, 200);
  ASSERT_TRUE(f.cost.has_value());
  EXPECT_DOUBLE_EQ(*f.cost, 0.125);
}

TEST(CarbonIntensityParsing, ANumberIsGramsPerKilowattHour) {
  const auto c = parse_carbon_intensity("350.5", "--carbon-intensity");
  EXPECT_DOUBLE_EQ(c.g_per_kwh, 350.5);
  EXPECT_EQ(c.source, "--carbon-intensity");
  EXPECT_FALSE(c.region.has_value());
  EXPECT_DOUBLE_EQ(parse_carbon_intensity("0", "x").g_per_kwh, 0);  // own renewables: a real contract
}

TEST(CarbonIntensityParsing, ARegionTakesTheTablesFigureAndYear) {
  const auto c = parse_carbon_intensity("de", "WATTWISE_CARBON_INTENSITY");
  const RegionIntensity* de = find_carbon_region("DE");
  ASSERT_NE(de, nullptr);
  EXPECT_DOUBLE_EQ(c.g_per_kwh, de->g_per_kwh);
  EXPECT_EQ(c.region, "DE");
  EXPECT_EQ(c.data_year, de->year);
  EXPECT_EQ(c.source, "WATTWISE_CARBON_INTENSITY");
}

TEST(CarbonIntensityParsing, NegativeTooLargeAndUnknownAreUsageErrorsNamingTheSource) {
  EXPECT_EQ(usage_exit_code([] { parse_carbon_intensity("-1", "--carbon-intensity"); }), 2);
  EXPECT_EQ(usage_exit_code([] { parse_carbon_intensity("350000", "--carbon-intensity"); }), 2);
  EXPECT_EQ(usage_exit_code([] { parse_carbon_intensity("XX", "--carbon-intensity"); }), 2);
  EXPECT_EQ(usage_exit_code([] { parse_carbon_intensity("", "--carbon-intensity"); }), 2);
  EXPECT_EQ(usage_exit_code([] { parse_carbon_intensity("nan", "--carbon-intensity"); }), 2);
  const std::string unknown =
      error_text([] { parse_carbon_intensity("Atlantis", "WATTWISE_CARBON_INTENSITY"); });
  EXPECT_NE(unknown.find("WATTWISE_CARBON_INTENSITY 'Atlantis'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("world"), std::string::npos) << unknown;  // lists what it knows
  EXPECT_EQ(unknown.find('\n'), std::string::npos) << unknown;     // one line
}

TEST(PriceParsing, AmountWithOrWithoutCurrency) {
  const auto p = parse_price("0.30EUR", "--price");
  EXPECT_DOUBLE_EQ(p.per_kwh, 0.30);
  EXPECT_EQ(p.currency, "EUR");
  const auto spaced = parse_price(" 0.12 usd ", "WATTWISE_PRICE");
  EXPECT_DOUBLE_EQ(spaced.per_kwh, 0.12);
  EXPECT_EQ(spaced.currency, "USD");
  EXPECT_EQ(spaced.source, "WATTWISE_PRICE");
  const auto bare = parse_price("0.2", "--price");
  EXPECT_DOUBLE_EQ(bare.per_kwh, 0.2);
  EXPECT_EQ(bare.currency, "");
}

TEST(PriceParsing, MalformedNegativeAndPerMegawattHourAreUsageErrors) {
  for (const char* bad : {"EUR", "0.30 euros", "0.3.0", "-0.3EUR", "250EUR", "", "0.30E", "1e400"})
    EXPECT_EQ(usage_exit_code([&] { parse_price(bad, "--price"); }), 2) << bad;
}

TEST(FootprintFormatting, ThreeSignificantDigitsInEveryUnit) {
  EXPECT_EQ(format_kwh(68'680 / 3.6e6), "0.0191 kWh");
  EXPECT_EQ(format_kwh(2.4321), "2.43 kWh");
  EXPECT_EQ(format_kwh(1520.4), "1520 kWh");
  EXPECT_EQ(format_kwh(std::nullopt), "n/a");
  EXPECT_EQ(format_co2e_g(7.2712), "7.27 gCO2e");
  EXPECT_EQ(format_co2e_g(1520), "1.52 kgCO2e");
  EXPECT_EQ(format_co2e_g(2.5e6), "2.50 tCO2e");
  EXPECT_EQ(format_cost(0.005724, "EUR"), "0.00572 EUR");
  EXPECT_EQ(format_cost(12.4, "USD"), "12.40 USD");
  EXPECT_EQ(format_cost(0.5, ""), "0.500");
}

TEST(CarbonRegionTable, CodesAreUniqueUpperCaseAlpha2PlusWorldAndEu) {
  std::set<std::string> seen;
  for (const auto& region : carbon_regions()) {
    const std::string code(region.code);
    EXPECT_TRUE(seen.insert(code).second) << "duplicate " << code;
    if (code == "world" || code == "eu") continue;
    ASSERT_EQ(code.size(), 2u) << code;
    EXPECT_TRUE(std::isupper(static_cast<unsigned char>(code[0])) &&
                std::isupper(static_cast<unsigned char>(code[1])))
        << code;
  }
  EXPECT_TRUE(seen.contains("world"));
}

TEST(CarbonRegionTable, EveryFigureIsDatedAndWithinTheRangeAUserMayGive) {
  for (const auto& region : carbon_regions()) {
    EXPECT_GE(region.year, 2021) << region.code;
    EXPECT_LE(region.year, 2024) << region.code;
    EXPECT_GT(region.g_per_kwh, 0) << region.code;
    EXPECT_LE(region.g_per_kwh, kMaxCarbonIntensityGPerKwh) << region.code;
  }
}

TEST(CarbonRegionTable, LookupIgnoresCaseAndRefusesUnknownCodes) {
  ASSERT_NE(find_carbon_region("World"), nullptr);
  EXPECT_EQ(find_carbon_region("World"), find_carbon_region("WORLD"));
  ASSERT_NE(find_carbon_region("fr"), nullptr);
  EXPECT_EQ(find_carbon_region("fr")->name, "France");
  EXPECT_EQ(find_carbon_region("XX"), nullptr);
  EXPECT_EQ(find_carbon_region("DEU"), nullptr);  // alpha-2 only
}

TEST(CarbonRegionTable, FiguresOrderAsTheGridsMixesDo) {
  // Sanity against transcription slips: hydro/nuclear grids below the world average, coal grids above.
  const double world = find_carbon_region("world")->g_per_kwh;
  for (const char* low : {"NO", "SE", "FR", "CH", "IS"})
    EXPECT_LT(find_carbon_region(low)->g_per_kwh, 100) << low;
  for (const char* high : {"IN", "ZA", "PL", "CN"})
    EXPECT_GT(find_carbon_region(high)->g_per_kwh, world) << high;
}

}  // namespace
}  // namespace wattwise

namespace wattwise {
namespace {

TEST(FootprintSaving, PerRunIsTheEnergyDifferencePerHourScalesByTheReferencesPace) {
  FootprintRates rates;
  rates.carbon = CarbonIntensity{500, "test", std::nullopt, std::nullopt};
  // Reference: 72 kJ in 360 s; the setting: 54 kJ. Saved 18 kJ = 0.005 kWh per run; the reference does
  // 10 runs an hour, so 0.05 kWh per hour of its work.
  const Saving s = saving_against_reference(72'000, 360, 54'000, rates);
  EXPECT_DOUBLE_EQ(s.per_run.energy_kwh, 0.005);
  EXPECT_DOUBLE_EQ(*s.per_run.co2e_g, 2.5);
  EXPECT_DOUBLE_EQ(s.per_hour.energy_kwh, 0.05);
  EXPECT_DOUBLE_EQ(*s.per_hour.co2e_g, 25);
  EXPECT_FALSE(s.per_run.cost.has_value());
}

TEST(FootprintSaving, ASettingThatUsesMoreEnergyHasANegativeSaving) {
  const Saving s = saving_against_reference(1000, 10, 1360, {});
  EXPECT_DOUBLE_EQ(s.per_run.energy_kwh, -360 / 3.6e6);
  EXPECT_LT(s.per_hour.energy_kwh, 0);
}

TEST(FootprintSaving, AReferenceOfZeroTimeHasNoHourlyRate) {
  EXPECT_EQ(saving_against_reference(1000, 0, 500, {}).per_hour.energy_kwh, 0);
}

}  // namespace
}  // namespace wattwise

namespace wattwise {
namespace {

TEST(CarbonRegionTable, TheDocsTableListsEveryRegionWithTheSameFigureAndYear) {
  std::ifstream in(std::string(WATTWISE_DOCS_DIR) + "/footprint.md");
  ASSERT_TRUE(in) << "docs/footprint.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string docs = text.str();
  for (const auto& region : carbon_regions()) {
    const std::string row =
        fmt::format("| `{}` | {} | {:.2f} | {} |", region.code, region.name, region.g_per_kwh, region.year);
    EXPECT_NE(docs.find(row), std::string::npos) << "docs/footprint.md lacks: " << row;
  }
}

}  // namespace
}  // namespace wattwise
