#include <gtest/gtest.h>

#include <cmath>

#include "report/html/report_parts.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

using testing::sweep_model;

const SettingResult& at_limit(const ReportModel& m, double limit_w) {
  return m.settings.at(find_setting(m, {{"power_limit_w", limit_w}}));
}

TEST(ReportModel, NormalisesToTheReferenceMeans) {
  const auto m = sweep_model();
  ASSERT_EQ(m.settings.size(), 3u);
  const auto& ref = m.settings.at(m.reference_index);
  EXPECT_TRUE(ref.is_reference);
  EXPECT_DOUBLE_EQ(ref.setting.at("power_limit_w"), 300);
  for (const auto& q : m.quantities) EXPECT_NEAR(ref.normalised.at(q).value, 1.0, 1e-12) << q;

  const auto& s200 = at_limit(m, 200);  // E 800 J, t 12 s against 1000 J, 10 s
  EXPECT_NEAR(s200.normalised.at("E").value, 0.8, 1e-12);
  EXPECT_NEAR(s200.normalised.at("t").value, 1.2, 1e-12);
  EXPECT_NEAR(s200.normalised.at("EDP").value, 0.96, 1e-12);
  EXPECT_NEAR(s200.normalised.at("P").value, (800.0 / 12) / (1000.0 / 10), 1e-12);
  // EDS(k=2): ((k-1)/k) E/E_ref + (1/k) t/t_ref = 0.4 + 0.6
  EXPECT_NEAR(s200.normalised.at("EDS(k=2.0)").value, 1.0, 1e-12);
}

TEST(ReportModel, ErrorBarsAreTheSpreadOfPerRunNormalisedValues) {
  const auto m = sweep_model();
  const auto& s200 = at_limit(m, 200);  // energies 780 and 820 J: std 28.28 J, / 1000 J
  ASSERT_TRUE(s200.normalised.at("E").stddev.has_value());
  EXPECT_NEAR(*s200.normalised.at("E").stddev, std::sqrt(800.0) / 1000, 1e-12);
  EXPECT_NEAR(*at_limit(m, 250).normalised.at("E").stddev, 0.0, 1e-12);  // identical repeats
}

TEST(ReportModel, QuantitiesAreAvgPowerEnergyTimeEdpThenEachEds) {
  const auto m = sweep_model();
  EXPECT_EQ(m.quantities, (std::vector<std::string>{"P", "E", "t", "EDP", "EDS(k=2.0)", "EDS(k=1.5)"}));
  EXPECT_EQ(m.knobs, (std::vector<std::string>{"power_limit_w"}));
}

TEST(ReportModel, ParetoFrontIsOrderedByTime) {
  const auto m = sweep_model();
  // 300 W (10 s, 1000 J), 250 W (11 s, 850 J), 200 W (12 s, 800 J): all on the front.
  ASSERT_EQ(m.pareto_front.size(), 3u);
  for (std::size_t i = 1; i < m.pareto_front.size(); ++i)
    EXPECT_LT(m.settings[m.pareto_front[i - 1]].time_s.mean, m.settings[m.pareto_front[i]].time_s.mean);
}

TEST(ReportModel, IsoLinesPassThroughTheReference) {
  const auto m = sweep_model();
  ASSERT_EQ(m.iso_lines.size(), 4u);  // E, EDP, EDS(k=2.0), EDS(k=1.5)
  for (const auto& line : m.iso_lines) {
    // Each line at x = 1 has y = 1; check by interpolating between its neighbouring points.
    for (std::size_t i = 1; i < line.points.size(); ++i) {
      const auto [x0, y0] = line.points[i - 1];
      const auto [x1, y1] = line.points[i];
      if (x0 <= 1 && 1 <= x1) {
        EXPECT_NEAR(y0 + (1 - x0) * (y1 - y0) / (x1 - x0), 1.0, 2e-3) << line.metric;
      }
    }
  }
  // EDS(k=2) is the straight line y = 2 - x.
  for (const auto& [x, y] : m.iso_lines[2].points) EXPECT_NEAR(y, 2 - x, 1e-12);
}

TEST(ReportModel, TableRowsCompareWithTheReferenceAndNameOptima) {
  const auto m = sweep_model();
  const auto& row = m.table.at(find_setting(m, {{"power_limit_w", 200}}));
  EXPECT_NEAR(*row.energy_vs_ref_pct, -20.0, 1e-9);
  EXPECT_NEAR(*row.time_vs_ref_pct, 20.0, 1e-9);
  EXPECT_NEAR(*row.power_w, (780.0 / 12 + 820.0 / 12) / 2, 1e-9);
  // 200 W has the lowest energy; 250 W (850 J twice) is faster but 6% above it, beyond the pooled noise
  // of one run and the tie rule's 0.5%: 200 W is the E pick and the best.
  EXPECT_NE(std::find(row.optimum_for.begin(), row.optimum_for.end(), "E"), row.optimum_for.end());
  const auto& e = m.recommendations.at(0);
  EXPECT_EQ(e.metric.name(), "E");
  EXPECT_EQ(e.best_index, find_setting(m, {{"power_limit_w", 200}}));
  EXPECT_EQ(e.setting_index, e.best_index);
  const auto& faster = m.table.at(find_setting(m, {{"power_limit_w", 250}}));
  EXPECT_EQ(std::find(faster.optimum_for.begin(), faster.optimum_for.end(), "E"), faster.optimum_for.end());
}

TEST(ReportModel, TracesAreMaskedMeansOnOneGrid) {
  const auto m = sweep_model(13);  // grid 0..12 s, 1 s apart
  ASSERT_EQ(m.grid_s.size(), 13u);
  EXPECT_DOUBLE_EQ(m.grid_s.back(), 12.0);
  ASSERT_EQ(m.traces.size(), 3u);
  const auto& ref = m.traces.at(m.reference_index);
  EXPECT_EQ(ref.runs_with_trace, 2u);
  // The reference's runs last 9 s (110 W) and 11 s (~91.8 W): both up to 9 s, one until 11, none after.
  EXPECT_NEAR(*ref.power_mean_w[5], (990.0 / 9 + 1010.0 / 11) / 2, 1e-9);
  EXPECT_NEAR(*ref.power_mean_w[10], 1010.0 / 11, 1e-9);
  EXPECT_FALSE(ref.power_mean_w[12].has_value());
  EXPECT_TRUE(ref.energy_std_j[9].has_value());
  EXPECT_FALSE(ref.energy_std_j[10].has_value());  // one run left: no spread
  // Cumulative energy at its end is the run's energy.
  EXPECT_NEAR(*ref.energy_mean_j[11], 1010.0, 1e-9);
}

TEST(ReportModel, KeepsEachRunWithItsCumulativeEnergy) {
  const auto m = sweep_model();
  ASSERT_EQ(m.runs.size(), 6u);
  const auto& first = m.runs.front();  // 200 W, 12 s at 65 W
  ASSERT_TRUE(first.energy_j.has_value());
  EXPECT_EQ(first.energy_j->time_s, first.power_w->time_s);
  EXPECT_NEAR(first.energy_j->value.back(), 780.0, 1e-9);
}

TEST(ReportModel, PhasesAreMeansOverRepeatsPerSetting) {
  const auto m = sweep_model();
  EXPECT_EQ(m.phases.phase_names, (std::vector<std::string>{"compute", "io"}));
  const auto i = find_setting(m, {{"power_limit_w", 200}});
  EXPECT_NEAR(*m.phases.time_s[i][0], 0.8 * 12, 1e-12);
  EXPECT_NEAR(*m.phases.energy_j[i][1], 0.2 * 800, 1e-12);
}

TEST(ReportModel, PhaseEnergyIsAbsentWhenNoRunHasIt) {
  const auto analysis = testing::sweep_analysis();
  auto details = testing::sweep_details();
  for (auto& d : details) d.phases = {{"compute", 1.0, std::nullopt}};
  const auto m = build_report_model(analysis, details, {});
  EXPECT_NEAR(*m.phases.time_s[0][0], 1.0, 1e-12);
  EXPECT_FALSE(m.phases.energy_j[0][0].has_value());
}

TEST(ReportModel, RunsWithoutTracesLeaveTheTraceChartsOut) {
  auto details = testing::sweep_details();
  for (auto& d : details) d.power_w.reset();
  const auto m = build_report_model(testing::sweep_analysis(), details, {});
  EXPECT_TRUE(m.grid_s.empty());
  EXPECT_TRUE(m.traces.empty());
  EXPECT_EQ(m.phases.phase_names.size(), 2u);
}

TEST(ReportModel, FitsEnergyTimeAndEdpAgainstTheKnob) {
  const auto m = sweep_model();
  ASSERT_EQ(m.fits.size(), 3u);
  for (const auto& f : m.fits) {
    EXPECT_EQ(f.knob, "power_limit_w");
    ASSERT_EQ(f.xs.size(), 3u);
    // Three points: the quadratic goes through all of them.
    EXPECT_NEAR(f.fit.r_squared, 1.0, 1e-9) << f.metric;
    for (std::size_t i = 0; i < f.xs.size(); ++i) EXPECT_NEAR(f.fit(f.xs[i]), f.ys[i], 1e-9) << f.metric;
  }
  const auto& energy = m.fits[0];
  EXPECT_EQ(energy.metric, "E");
  EXPECT_DOUBLE_EQ(energy.measured_optimum_x, 200);
  EXPECT_NEAR(energy.measured_optimum_y, 0.8, 1e-12);
  EXPECT_GE(energy.fit.optimum_x, 200);
  EXPECT_LE(energy.fit.optimum_x, 300);
}

TEST(ReportModel, NoFitWithFewerThanThreeKnobValues) {
  auto runs = testing::sweep_runs();
  runs.erase(runs.begin(), runs.begin() + 2);  // 250 and 300 W left
  analysis::AnalysisOptions options;
  options.default_setting = analysis::Setting{{"power_limit_w", 300}};
  const auto m = build_report_model(analysis::analyze(runs, options), {}, {});
  EXPECT_TRUE(m.fits.empty());
}

TEST(ReportModel, FitsOnlyTheSliceThroughTheReference) {
  // Two knobs: the batch-64 points must not enter the power-limit fit.
  std::vector<analysis::RunRecord> runs;
  for (double limit : {200.0, 250.0, 300.0})
    for (double batch : {64.0, 128.0}) {
      analysis::RunRecord r;
      r.setting = {{"power_limit_w", limit}, {"batch", batch}};
      r.time_s = 10 + (300 - limit) / 50 + (batch == 64 ? 5 : 0);
      r.energy_j = 1000 - (300 - limit);
      runs.push_back(r);
    }
  analysis::AnalysisOptions options;
  options.default_setting = analysis::Setting{{"power_limit_w", 300}, {"batch", 128}};
  const auto m = build_report_model(analysis::analyze(runs, options), {}, {});
  ASSERT_FALSE(m.fits.empty());
  for (const auto& f : m.fits) {
    EXPECT_EQ(f.knob, "power_limit_w");  // batch has two values only
    EXPECT_EQ(f.xs.size(), 3u);
  }
}

}  // namespace
}  // namespace wattwise::report::html
