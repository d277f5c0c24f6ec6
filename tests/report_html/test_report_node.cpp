// Node energy (CPU+DRAM, meter) in the report's table: a mean per setting, columns only where measured.
#include <gtest/gtest.h>

#include "report/html/html_report.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

ReportModel model_with_node(bool with_node) {
  auto details = testing::sweep_details();
  for (auto& d : details) {
    if (!with_node) continue;
    // CPU+DRAM of 100 J per run plus 10 J per repeat: the 200 W setting's mean is 105 J.
    d.node_cpu_dram_j = 100.0 + 10.0 * d.repeat;
    if (d.setting.at("power_limit_w") == 200)
      d.node_meter_j = d.repeat == 0 ? 2000.0 : std::optional<double>();
  }
  ReportInfo info;
  info.title = "node sweep";
  return build_report_model(testing::sweep_analysis(), details, info, {});
}

const TableRow& row_of(const ReportModel& model, double limit) {
  for (const auto& row : model.table)
    if (model.settings.at(row.setting_index).setting.at("power_limit_w") == limit) return row;
  throw std::runtime_error("no row");
}

TEST(ReportNode, NodeEnergyIsTheMeanOverTheSettingsRuns) {
  const auto model = model_with_node(true);
  EXPECT_DOUBLE_EQ(*row_of(model, 200).node_cpu_dram_j, 105.0);
  EXPECT_DOUBLE_EQ(*row_of(model, 200).node_meter_j, 2000.0);  // the one run with a meter figure
  EXPECT_FALSE(row_of(model, 300).node_meter_j);
}

TEST(ReportNode, TableHasNodeColumnsOnlyWhereMeasured) {
  const std::string with = render_html_report(model_with_node(true));
  EXPECT_NE(with.find("<th>node CPU+DRAM (J)</th>"), std::string::npos);
  EXPECT_NE(with.find("<th>node meter (J)</th>"), std::string::npos);
  EXPECT_NE(with.find("<td>105.0</td>"), std::string::npos);
  const std::string without = render_html_report(model_with_node(false));
  EXPECT_EQ(without.find("node CPU+DRAM"), std::string::npos);
  EXPECT_EQ(without.find("node meter"), std::string::npos);
}

}  // namespace
}  // namespace wattwise::report::html
