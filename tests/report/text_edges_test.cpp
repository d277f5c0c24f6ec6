// Issue 10, item 10: text from outside (labels, knob names, phase names) must neither break JSON output nor
// drive the terminal.
#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analysis.hpp"
#include "analysis/analysis_json.hpp"
#include "analysis/runs_csv.hpp"
#include "core/text.hpp"
#include "report/analysis_report.hpp"
#include "report/table.hpp"

namespace wattwise::report {
namespace {

TEST(Table, ControlSequencesInCellsAreShownNotObeyed) {
  Table table({"phase", "time"});
  table.add_row({"\x1b[2J\x1b]0;owned\x07step", "1.0 s"});
  const std::string text = table.render();
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << text;
  EXPECT_NE(text.find("\\e[2J\\e]0;owned\\x07step"), std::string::npos) << text;
}

// `analyze --json` of a CSV whose label has a flipped byte was "internal error" (exit 70).
TEST(AnalyzeJson, InvalidUtf8InALabelIsRepairedWhereTheCsvIsRead) {
  std::istringstream csv(
      "power_limit_w,time_s,energy_j,label\n"
      "300,10,3000,ref\xFF\n"
      "250,11,2800,\x1b[31mcapped\n");
  const auto runs = analysis::parse_runs_csv(csv, "runs.csv");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(is_valid_utf8(runs[0].label));
  const auto result = analysis::analyze(runs);
  EXPECT_NO_THROW((void)analysis::to_json(result).dump());
  EXPECT_EQ(analysis_text(result).find('\x1b'), std::string::npos);
}

// `analyze tune.db` printed blank setting names: the tuned job's one run set nothing itself.
TEST(AnalyzeText, ARunThatSetNothingIsNamedAsFound) {
  analysis::RunRecord run;
  run.time_s = 10;
  run.energy_j = 3000;
  const auto text = analysis_text(analysis::analyze({run}));
  EXPECT_NE(text.find("Reference: as found"), std::string::npos) << text;
}

// The table shows the measurement's error bar in a column of its own ("meas. ±"), apart from "energy (± std)",
// the spread of repeats, and only when the runs carry one.
TEST(AnalyzeText, TheMeasurementsErrorBarHasAColumnApartFromTheSpread) {
  std::vector<analysis::RunRecord> runs(2);
  runs[0].setting = {{"power_limit_w", 300}};
  runs[1].setting = {{"power_limit_w", 200}};
  runs[0].time_s = 10;
  runs[0].energy_j = 3000;
  runs[1].time_s = 12;
  runs[1].energy_j = 2500;
  EXPECT_EQ(analysis_text(analysis::analyze(runs)).find("meas. ±"), std::string::npos);
  runs[0].energy_uncertainty_j = 12.5;
  const auto text = analysis_text(analysis::analyze(runs));
  const auto header = text.find("energy (± std)");
  ASSERT_NE(header, std::string::npos) << text;
  EXPECT_NE(text.find("meas. ±", header), std::string::npos) << text;
  EXPECT_NE(text.find("12.500 J"), std::string::npos) << text;
  EXPECT_NE(text.find("n/a"), std::string::npos) << text;  // the other setting's bar is unknown
}

}  // namespace
}  // namespace wattwise::report
