// The report's "Energy in kWh, CO2e and cost" block (report/html/html_footprint.hpp).
#include <gtest/gtest.h>

#include "core/footprint.hpp"
#include "report/html/html_footprint.hpp"
#include "report/html/html_report.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

const analysis::Recommendation& energy_recommendation(const ReportModel& model) {
  for (const auto& r : model.recommendations)
    if (r.metric.name() == "E") return r;
  throw std::runtime_error("no E recommendation");
}

TEST(HtmlFootprint, WithoutRatesShowsKilowattHoursOnlyAndSaysHowToAddCo2eAndCost) {
  const auto model = testing::sweep_model();
  const std::string html = footprint_section_html(model);
  EXPECT_NE(html.find("<section id=\"footprint\">"), std::string::npos);
  // The reference: 1000 J a run on average.
  EXPECT_NE(html.find(format_kwh(1000 / 3.6e6)), std::string::npos) << html;
  EXPECT_EQ(html.find("gCO2e"), std::string::npos) << html;
  EXPECT_NE(html.find("--carbon-intensity"), std::string::npos) << html;
}

TEST(HtmlFootprint, SavingPerHourIsTheRunsSavingAtTheReferencesPace) {
  auto model = testing::sweep_model();
  model.footprint.carbon = CarbonIntensity{500, "--carbon-intensity", std::nullopt, std::nullopt};
  model.footprint.price = ElectricityPrice{0.25, "EUR", "--price"};
  const auto& r = energy_recommendation(model);
  ASSERT_LT(r.energy_j, 1000);  // it saves energy, so the figures are positive
  const double saved_j = 1000 - r.energy_j;
  const double per_hour_kwh = saved_j * 3600 / 10 / 3.6e6;  // the reference takes 10 s a run
  const std::string html = footprint_section_html(model);
  EXPECT_NE(html.find(format_kwh(saved_j / 3.6e6)), std::string::npos) << html;
  EXPECT_NE(html.find(format_kwh(per_hour_kwh)), std::string::npos) << html;
  EXPECT_NE(html.find(format_co2e_g(per_hour_kwh * 500)), std::string::npos) << html;
  EXPECT_NE(html.find(format_cost(per_hour_kwh * 0.25, "EUR")), std::string::npos) << html;
  EXPECT_NE(html.find("500 gCO2e/kWh, from --carbon-intensity"), std::string::npos) << html;
}

TEST(HtmlFootprint, ASingleRunShowsItsOwnEnergyAndNoSavingsTable) {
  ReportModel model;
  SettingResult only;
  only.label = "as run";
  only.energy_j.mean = 7.2e6;
  only.time_s.mean = 100;
  model.settings.push_back(only);
  model.footprint.carbon = CarbonIntensity{100, "x", std::string("FR"), 2023};
  const std::string html = footprint_section_html(model);
  EXPECT_NE(html.find("This run: 2.00 kWh &middot; 200 gCO2e"), std::string::npos) << html;
  EXPECT_EQ(html.find("saved per run"), std::string::npos) << html;
  EXPECT_NE(html.find("FR, Ember 2023"), std::string::npos) << html;
}

TEST(HtmlFootprint, TheReportPageCarriesTheBlock) {
  auto model = testing::sweep_model();
  model.footprint.carbon = CarbonIntensity{400, "WATTWISE_CARBON_INTENSITY", std::nullopt, std::nullopt};
  const std::string page = render_html_report(model);
  EXPECT_NE(page.find("<section id=\"footprint\">"), std::string::npos);
  EXPECT_NE(page.find("from WATTWISE_CARBON_INTENSITY"), std::string::npos);
}

}  // namespace
}  // namespace wattwise::report::html
