#include "report/html/html_report.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "report/html/report_json.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

// The JSON between <script type="application/json" id="wattwise-data"> and </script>, as the page reads it.
nlohmann::json data_blob(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"wattwise-data\">";
  const auto begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const auto end = html.find("</script>", begin);
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

TEST(HtmlReport, CarriesTheDataBlobTheModelMakes) {
  const auto model = testing::sweep_model();
  const auto html = render_html_report(model);
  const auto blob = data_blob(html);
  ASSERT_FALSE(blob.is_null());
  EXPECT_EQ(blob, to_json(model));
  EXPECT_EQ(blob["settings"].size(), 3u);
  EXPECT_EQ(blob["quantities"][0], "P");
  EXPECT_EQ(blob["grid_s"].size(), 13u);
}

TEST(HtmlReport, HasEveryChartContainerAndCountsThem) {
  const auto model = testing::sweep_model();
  const auto html = render_html_report(model);
  const std::vector<std::string> expected = {"chart-knob-power_limit_w",
                                             "chart-plane",
                                             "chart-power",
                                             "chart-energy",
                                             "chart-phase-time",
                                             "chart-phase-energy",
                                             "chart-fit-power_limit_w"};
  EXPECT_EQ(chart_ids(model), expected);
  for (const auto& id : expected) EXPECT_NE(html.find("<canvas id=\"" + id + "\">"), std::string::npos) << id;
  EXPECT_NE(html.find("data-charts-expected=\"7\""), std::string::npos);
}

TEST(HtmlReport, IsSelfContained) {
  const auto html = render_html_report(testing::sweep_model());
  EXPECT_NE(html.find("Chart.js v3"), std::string::npos);        // the library itself, embedded
  EXPECT_NE(html.find("wattwiseErrorBars"), std::string::npos);  // the page's own script
  EXPECT_EQ(html.find("<script src="), std::string::npos);
  EXPECT_EQ(html.find("<link "), std::string::npos);
  EXPECT_EQ(html.find("https://cdn"), std::string::npos);
}

TEST(HtmlReport, LeavesOutChartsWithoutData) {
  auto details = testing::sweep_details();
  for (auto& d : details) {
    d.power_w.reset();
    d.phases.clear();
  }
  const auto model = build_report_model(testing::sweep_analysis(), details, {});
  const auto html = render_html_report(model);
  EXPECT_EQ(html.find("<canvas id=\"chart-power\">"), std::string::npos);
  EXPECT_EQ(html.find("<canvas id=\"chart-phase-time\">"), std::string::npos);
  EXPECT_NE(html.find("<canvas id=\"chart-plane\">"), std::string::npos);
  EXPECT_NE(html.find("data-charts-expected=\"3\""), std::string::npos);
}

TEST(HtmlReport, TextCannotBreakOutOfTheDataBlobOrTheMarkup) {
  auto model = testing::sweep_model();
  model.info.title = "</script><script>alert(1)</script> & <b>";
  model.info.command = "python train.py --tag \"</script>\"";
  const auto html = render_html_report(model);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_EQ(html.find("</script>\"", html.find("wattwise-data")), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(1)"), std::string::npos);
  const auto blob = data_blob(html);  // still parses, and reads back the same text
  ASSERT_FALSE(blob.is_null());
  EXPECT_EQ(blob["info"]["title"], model.info.title);
  EXPECT_EQ(blob["info"]["command"], model.info.command);
}

TEST(HtmlReport, TableHasOneRowPerSettingWithTheReferenceMarked) {
  const auto html = render_html_report(testing::sweep_model());
  EXPECT_NE(html.find("<tr class=\"reference\"><td>power_limit_w=300 (reference)</td><td>100.9</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>power_limit_w=250</td><td>77.3</td><td>850.0</td><td>-15.0</td><td>11.000</td>"
                      "<td>+10.0</td><td>EDP, EDS(k=2.0), gain-loss</td></tr>"),
            std::string::npos);
}

TEST(HtmlReport, RecommendationsShowTheBandAndThePick) {
  const auto html = render_html_report(testing::sweep_model());
  EXPECT_NE(html.find("within the noise of the best (power_limit_w=300, one-sided t at 95% on the pooled "
                      "noise): power_limit_w=250, power_limit_w=300; picked the fastest within 0.5%"),
            std::string::npos);
  EXPECT_NE(html.find("<dt>analysis</dt><dd>judged on the whole run</dd>"), std::string::npos);
}

TEST(HtmlReport, FitsTableHasROfEachQuantityAndBothOptima) {
  const auto model = testing::sweep_model();
  const auto html = render_html_report(model);
  // Three points per quantity: exact fits; energy is lowest at 200 W (0.8 of the reference).
  EXPECT_NE(html.find("<tr><td>E</td><td>1.0000</td><td>200</td><td>0.8000</td><td>200</td><td>0.8000</td>"
                      "<td class=\"recommended\">200</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<tr><td>EDP</td><td>1.0000</td>"), std::string::npos);
}

TEST(ReportJson, AbsentValuesAreNull) {
  auto model = testing::sweep_model();
  const auto json = to_json(model);
  // The reference's trace past its longest run (11 s) has no data at 12 s.
  EXPECT_TRUE(json["traces"][model.reference_index]["power_mean_w"][12].is_null());
  EXPECT_TRUE(json["settings"][0]["normalised"]["E"]["std"].is_number());
  model.settings[0].normalised["E"].stddev.reset();
  EXPECT_TRUE(to_json(model)["settings"][0]["normalised"]["E"]["std"].is_null());
}

TEST(ReportJson, FitsCarryTheirCurveAndBothOptima) {
  const auto json = to_json(testing::sweep_model());
  ASSERT_EQ(json["fits"].size(), 3u);
  const auto& fit = json["fits"][0];
  EXPECT_EQ(fit["metric"], "E");
  EXPECT_EQ(fit["curve"].size(), 51u);
  EXPECT_DOUBLE_EQ(fit["curve"][0][0].get<double>(), 200.0);
  EXPECT_DOUBLE_EQ(fit["measured_optimum"][0].get<double>(), 200.0);
  EXPECT_NEAR(fit["r_squared"].get<double>(), 1.0, 1e-9);
}

}  // namespace
}  // namespace wattwise::report::html
