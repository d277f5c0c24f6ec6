#include "report/html/report_store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "report/html/html_report.hpp"
#include "store/results_store.hpp"

namespace wattwise::report::html {
namespace {

// A sweep database as the runner writes it (docs/results-schema.md): three power limits, two repeats, a
// warm-up, per-GPU phases, and traces for some runs only.
class StoreReport : public ::testing::Test {
 protected:
  void SetUp() override {
    const nlohmann::json plan = {
        {"knobs", {{{"name", "power_limit_w"}, {"kind", "hardware"}, {"values", {"200", "250", "300"}}}}},
        {"order", "ascending"},
        {"seed", 0},
        {"repeats", 2},
        {"warmup_runs", 1}};
    auto store = store::ResultsStore::create(db(), {"python train.py", "counter+samples", "node1"}, plan,
                                             {{0, "GPU-aaa", "H100", 200.0, 700.0, 300.0}});
    std::size_t index = 0;
    store.add_run(run(index++, 300, 0, true, 5, 5000));  // warm-up: never analysed
    for (double limit : {200.0, 250.0, 300.0})
      for (unsigned repeat = 0; repeat < 2; ++repeat) {
        const double t = 10 + (300 - limit) / 50;
        const auto r = run(index, limit, repeat, false, t, limit * t * 0.9);
        store.add_run(r);
        if (repeat == 0) store.add_trace_csv(index, 0, trace_csv(limit * 0.9, t));
        ++index;
      }
  }

  std::filesystem::path db() const { return dir_ / "sweep.db"; }

  static store::RunRecord run(std::size_t index, double limit, unsigned repeat, bool warmup, double t,
                              double e) {
    store::RunRecord r;
    r.plan_index = index;
    r.settings = {{"power_limit_w", fmt_number(limit)}};
    r.repeat = repeat;
    r.warmup = warmup;
    r.started_at = r.ended_at = "2025-01-01T00:00:00Z";
    r.exit_status = 0;
    r.time_s = t;
    r.energy_j = e;
    r.method = "counter";
    r.phases.push_back({0, "epoch", 1, t * 0.9, e * 0.9, 100, "samples"});
    r.phases.push_back({std::nullopt, "epoch", 1, t * 0.95, e * 0.95, 100, "samples"});  // all GPUs wins
    r.phases.push_back({0, "eval", 1, t * 0.05, std::nullopt, 5, "none"});
    return r;
  }

  static std::string fmt_number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  static std::string trace_csv(double power_w, double t) {
    std::ostringstream out;
    out << "# wattwise trace\ntime_s,gpu,energy_mj,power_inst_w,power_avg_w,power_sample_w\n";
    for (int i = 0; i <= 10; ++i)
      out << t * i / 10 << ",0,,,"
          << "," << power_w << "\n";
    return out.str();
  }

  wattwise::testing::TempDir dir_{"ww-report-store"};
};

TEST_F(StoreReport, AnalysesTheRunsAndReadsPhasesAndTraces) {
  const auto model = build_report_model_from_store(db());
  ASSERT_EQ(model.settings.size(), 3u);
  EXPECT_DOUBLE_EQ(model.settings.at(model.reference_index).setting.at("power_limit_w"), 300);
  EXPECT_EQ(model.settings[0].repeats, 2u);  // the warm-up is left out
  EXPECT_EQ(model.info.command, "python train.py");
  EXPECT_EQ(model.info.method, "counter+samples");
  EXPECT_EQ(model.info.gpu, "H100");

  EXPECT_EQ(model.phases.phase_names, (std::vector<std::string>{"epoch", "eval"}));
  // 200 W: t = 12 s, E = 200 * 12 * 0.9 = 2160 J; the all-GPU row (0.95) is used, not GPU 0's (0.9).
  EXPECT_NEAR(*model.phases.time_s[0][0], 12 * 0.95, 1e-9);
  EXPECT_NEAR(*model.phases.energy_j[0][0], 2160 * 0.95, 1e-9);
  EXPECT_FALSE(model.phases.energy_j[0][1].has_value());

  ASSERT_EQ(model.traces.size(), 3u);
  EXPECT_EQ(model.traces[0].runs_with_trace, 1u);
  EXPECT_NEAR(*model.traces[0].power_mean_w[0], 180.0, 1e-9);
  EXPECT_EQ(chart_ids(model).size(), 7u);
}

TEST_F(StoreReport, ANamedReferenceWins) {
  analysis::AnalysisOptions options;
  options.reference = analysis::Setting{{"power_limit_w", 250}};
  const auto model = build_report_model_from_store(db(), options);
  EXPECT_DOUBLE_EQ(model.settings.at(model.reference_index).setting.at("power_limit_w"), 250);
}

// Issue 10, item 10: one flipped byte in a database's GPU name made `report` an "internal error" (exit 70:
// the page's JSON could not be dumped). Text read from the database is repaired where the report reads it.
TEST(StoreReportText, FlippedBytesInNamesAreRepairedAndTheReportRenders) {
  const wattwise::testing::TempDir dir("ww-report-bytes");
  const nlohmann::json plan = {
      {"knobs", {{{"name", "power_limit_w"}, {"kind", "hardware"}, {"values", {"300"}}}}},
      {"order", "ascending"},
      {"seed", 0},
      {"repeats", 1},
      {"warmup_runs", 0}};
  {
    auto store =
        store::ResultsStore::create(dir / "sweep.db", {"python tr\xE1in.py", "counter", "node1"}, plan,
                                    {{0, "GPU-aaa",
                                      "H\xC1"
                                      "00",
                                      200.0, 700.0, 300.0}});
    store::RunRecord r;
    r.plan_index = 0;
    r.settings = {{"power_limit_w", "300"}};
    r.started_at = r.ended_at = "2025-01-01T00:00:00Z";
    r.time_s = 10;
    r.energy_j = 3000;
    r.method = "counter";
    r.phases.push_back({std::nullopt, "ep\xFFoch", 1, 9, 2700, 100, "samples"});
    store.add_run(r);
  }
  const auto model = build_report_model_from_store(dir / "sweep.db");
  EXPECT_EQ(model.info.gpu,
            "H\xEF\xBF\xBD"
            "00");
  EXPECT_EQ(model.phases.phase_names, (std::vector<std::string>{"ep\xEF\xBF\xBDoch"}));
  EXPECT_NO_THROW((void)render_html_report(model));
}

TEST(StoreReportErrors, AFileThatIsNotADatabaseIsRefused) {
  const wattwise::testing::TempDir dir("ww-not-a-db");
  const auto path = dir / "not-a-db";
  { std::ofstream(path) << "time_s,energy_j\n1,2\n"; }
  EXPECT_THROW(build_report_model_from_store(path), Error);
}

}  // namespace
}  // namespace wattwise::report::html
