#include "report/html/report_tables.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TablesMarkdown, OneRowPerSettingAgainstTheReference) {
  const auto lines = lines_of(render_tables_markdown(testing::sweep_model()));
  ASSERT_GE(lines.size(), 9u);
  EXPECT_EQ(lines[0], "## test sweep");
  EXPECT_EQ(lines[1], "");
  EXPECT_EQ(lines[2], "judged on the whole run.");  // the fixture's runs carry no phases
  EXPECT_EQ(lines[3], "");
  EXPECT_EQ(lines[4],
            "| setting | avg power (W) | energy (J) | energy vs ref (%) | time (s) | time vs ref (%) | "
            "optimum for |");
  EXPECT_EQ(lines[5], "| --- | ---: | ---: | ---: | ---: | ---: | --- |");
  // 200 W: E 800 J, t 12 s, P = mean of 65.0 and 68.33 W. Best on the means by hand (E/E_ref, t/t_ref):
  // 200 W (0.8, 1.2), 250 W (0.85, 1.1), 300 W (1, 1): E 200 W; EDP 0.96 / 0.935 / 1; ED2P 1.152 / 1.0285 /
  // 1; EDS(2) 1.0 / 0.975 / 1; EDS(1.5) 1.067 / 1.017 / 1; gain-loss 0 / +5 / 0. The optima named are the
  // picks: the tie rule only picks a faster band member within 0.5% of the best's metric, and no two
  // settings are that close here, so each metric's pick is its best.
  EXPECT_EQ(lines[6], "| power_limit_w=200 | 66.7 | 800.0 | -20.0 | 12.000 | +20.0 | E |");
  EXPECT_EQ(lines[7], "| power_limit_w=250 | 77.3 | 850.0 | -15.0 | 11.000 | +10.0 | EDP, EDS(k=2.0), gain-loss |");
  // P of the reference: mean of 990 J / 9 s and 1010 J / 11 s
  EXPECT_EQ(
      lines[8],
      "| power_limit_w=300 (reference) | 100.9 | 1000.0 | +0.0 | 10.000 | +0.0 | ED2P, EDS(k=1.5), time |");
}

TEST(TablesMarkdown, RecommendationsFollowTheTable) {
  const auto lines = lines_of(render_tables_markdown(testing::sweep_model()));
  ASSERT_GE(lines.size(), 12u);
  EXPECT_EQ(lines[9], "");
  EXPECT_EQ(
      lines[10],
      "| metric | best setting | energy vs ref (%) | time vs ref (%) | beyond noise | within the noise |");
  EXPECT_EQ(lines[11], "| --- | --- | ---: | ---: | --- | --- |");
  // 250 W's 850 J is 6% above 200 W's 800 J, beyond the pooled noise of one run (~18 J): outside the band.
  // Against the reference (Welch: 800 vs 1000 J, t = 8.94 on 1.47 degrees of freedom) it is beyond noise: the
  // t quantile at 1.47 df is 6.19 (12.7 at 1 df, the answer "no" when fractional df were rounded down).
  EXPECT_EQ(lines[12], "| E | power_limit_w=200 | -20.0 | +20.0 | yes | power_limit_w=200 |");
  // For time, 250 W's 11 s cannot be told from 300 W's 10 s (9 and 11): in the band, yet 10% slower, so
  // the pick stays the best.
  EXPECT_NE(lines.back().find("| time | power_limit_w=300 |"), std::string::npos) << lines.back();
  EXPECT_NE(lines.back().find("| power_limit_w=250, power_limit_w=300 |"), std::string::npos) << lines.back();
  EXPECT_EQ(lines.size(), 12u + 7u);  // one line per default metric
}

TEST(TablesCsv, KnobColumnsThenQuantitiesWithFullPrecision) {
  const auto lines = lines_of(render_tables_csv(testing::sweep_model()));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "power_limit_w,power_w,energy_j,energy_vs_ref_pct,time_s,time_vs_ref_pct,reference,optimum_for,"
            "energy_uncertainty_j");
  EXPECT_EQ(lines[1].rfind("200,66.66666666666", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",800,-19.99999999"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find(",12,19.99999999"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].substr(lines[1].size() - 5), ",0,E,");  // not the reference, the pick for E; no bar
  EXPECT_EQ(lines[2].substr(lines[2].size() - 28), ",0,EDP;EDS(k=2.0);gain-loss,");
  EXPECT_EQ(lines[3], "300,100.9090909090909,1000,0,10,0,1,ED2P;EDS(k=1.5);time,");
}

TEST(TablesCsv, AbsentValuesAreEmptyNotZero) {
  auto model = testing::sweep_model();
  model.table[0].power_w.reset();
  const auto lines = lines_of(render_tables_csv(model));
  EXPECT_EQ(lines[1].rfind("200,,800,", 0), 0u) << lines[1];
  EXPECT_NE(render_tables_markdown(model).find("| power_limit_w=200 | n/a | 800.0 |"), std::string::npos);
}

// The measurement's error bar: its own column beside the energy (markdown, HTML) and the CSV's last one,
// apart from any spread of repeats; the column is left out of the tables for people where no run has one.
TEST(Tables, TheMeasurementsErrorBarHasItsOwnColumn) {
  auto model = testing::sweep_model();
  EXPECT_EQ(render_tables_markdown(model).find("meas. ±"), std::string::npos);
  model.table[0].energy_uncertainty_j = 12.5;
  const auto md = lines_of(render_tables_markdown(model));
  ASSERT_GE(md.size(), 9u);
  EXPECT_EQ(md[4],
            "| setting | avg power (W) | energy (J) | meas. ± (J) | energy vs ref (%) | time (s) | time vs ref (%) | "
            "optimum for |");
  EXPECT_EQ(md[5], "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |");
  EXPECT_EQ(md[6], "| power_limit_w=200 | 66.7 | 800.0 | 12.5 | -20.0 | 12.000 | +20.0 | E |");
  EXPECT_EQ(md[7].rfind("| power_limit_w=250 | 77.3 | 850.0 | n/a | -15.0 |", 0), 0u) << md[7];
  const auto csv = lines_of(render_tables_csv(model));
  ASSERT_EQ(csv.size(), 4u);
  EXPECT_EQ(csv[1].substr(csv[1].size() - 9), ",0,E,12.5") << csv[1];
}

}  // namespace
}  // namespace wattwise::report::html
