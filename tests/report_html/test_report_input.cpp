#include "report/html/report_input.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

TEST(ReportFormat, ParsesTheThreeFormats) {
  EXPECT_EQ(parse_report_format("html"), ReportFormat::kHtml);
  EXPECT_EQ(parse_report_format("md"), ReportFormat::kMarkdown);
  EXPECT_EQ(parse_report_format("csv"), ReportFormat::kCsv);
  try {
    parse_report_format("pdf");
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("html, md or csv"), std::string::npos);
  }
}

TEST(ReportInput, PhasesFileSitsBesideTheTrace) {
  EXPECT_EQ(phases_path_for("/runs/run1.csv"), std::filesystem::path("/runs/run1.phases.csv"));
}

TEST(ReportInput, ATraceCsvWithItsPhasesMakesASingleRunReport) {
  const wattwise::testing::TempDir dir("ww-report-input");
  {
    std::ofstream(dir / "run.csv")
        << "# wattwise trace\ntime_s,gpu,energy_mj,power_inst_w\n0,0,,100\n1,0,,100\n";
    std::ofstream(dir / "run.phases.csv")
        << "name,begin_s,end_s,rank,energy_j,method,counters\nall,0,1,,100,x,\n";
  }
  const auto model = load_report_model(dir / "run.csv", {}, "9.9");
  EXPECT_EQ(model.info.tool_version, "9.9");
  EXPECT_DOUBLE_EQ(model.settings.at(0).energy_j.mean, 100.0);
  EXPECT_EQ(model.phases.phase_names, (std::vector<std::string>{"all"}));
  EXPECT_NE(render_report(model, ReportFormat::kHtml).find("<canvas id=\"chart-power\">"), std::string::npos);
  EXPECT_EQ(render_report(model, ReportFormat::kCsv).rfind("power_w,energy_j,", 0), 0u);
}

TEST(ReportInput, AMissingInputIsAnEnvironmentError) {
  try {
    load_report_model("/nonexistent/sweep.db");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/sweep.db"), std::string::npos);
  }
}

}  // namespace
}  // namespace wattwise::report::html
