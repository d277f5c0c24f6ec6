// Issue 15 item 4: one measurement gets its own layout (each GPU's power and their sum, phases shaded and
// named, no repeat captions, no seven "as measured" lines), and `wattwise report X.db` has a default file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "report/html/html_report.hpp"
#include "report/html/report_builder.hpp"
#include "report/html/report_input.hpp"
#include "report/html/report_json.hpp"
#include "report/html/report_tables.hpp"
#include "report_fixtures.hpp"

namespace wattwise::report::html {
namespace {

// GPU 0 at 100 W and GPU 1 at 50 W for 2 s; phases: one "training" holding two "epoch"s and 20 iterations.
ReportModel two_gpu_run() {
  std::ostringstream trace;
  trace << "# job_start_s=0.000000\n# job_end_s=2.000000\ntime_s,gpu,power_inst_w,power_sample_w\n";
  for (int i = 0; i <= 20; ++i) trace << i * 0.1 << ",0,,100\n" << i * 0.1 << ",1,,50\n";
  std::ostringstream phases;
  phases << "name,begin_s,end_s,rank,energy_j,method,counters,same_name_depth\n"
         << "training,0,2,,300,samples,,0\nepoch,0,1,,150,samples,,0\nepoch,1,2,,150,samples,,0\n";
  for (int i = 0; i < 20; ++i)
    phases << "iteration," << i * 0.1 << "," << (i + 1) * 0.1 << ",,15,samples,,0\n";
  std::istringstream trace_in(trace.str()), phases_in(phases.str());
  return build_report_model_from_trace(trace_in, &phases_in, ReportInfo{});
}

std::string markup(const std::string& html) {
  return html.substr(0, html.find("<script type=\"application/json\""));
}

TEST(SingleRun, DrawsEachGpuAndTheirSum) {
  const auto model = two_gpu_run();
  ASSERT_TRUE(model.single_run.has_value());
  const auto& single = *model.single_run;
  EXPECT_EQ(single.series, (std::vector<std::string>{"GPU 0", "GPU 1", "all GPUs"}));
  ASSERT_EQ(single.power_w.size(), 3u);
  ASSERT_EQ(single.gpu_energy_j.size(), 2u);
  EXPECT_NEAR(*single.gpu_energy_j[0], 200.0, 1e-9);
  EXPECT_NEAR(*single.gpu_energy_j[1], 100.0, 1e-9);
  EXPECT_NEAR(model.settings[0].energy_j.mean, 300.0, 1e-9);
  const std::size_t middle = model.grid_s.size() / 2;
  EXPECT_NEAR(*single.power_w[0][middle], 100.0, 1e-9);
  EXPECT_NEAR(*single.power_w[1][middle], 50.0, 1e-9);
  EXPECT_NEAR(*single.power_w[2][middle], 150.0, 1e-9);
}

TEST(SingleRun, ShadesPhasesThatAreFewAndListsTheFrequentOnes) {
  const auto model = two_gpu_run();
  const auto& spans = model.single_run->spans;
  ASSERT_EQ(spans.size(), 3u);  // training, epoch, epoch; the 20 iterations would paint the chart solid
  EXPECT_EQ(spans[0].name, "training");
  EXPECT_DOUBLE_EQ(spans[2].begin_s, 1.0);
  EXPECT_DOUBLE_EQ(spans[2].end_s, 2.0);
  EXPECT_EQ(model.single_run->unshaded, (std::vector<std::string>{"iteration"}));
  const auto json = to_json(model);
  EXPECT_EQ(json["single_run"]["spans"][1]["name"], "epoch");
  EXPECT_EQ(json["single_run"]["series"][2], "all GPUs");
}

TEST(SingleRun, PageHasNoRepeatCaptionsNoAsMeasuredLinesAndPerGpuFigures) {
  const auto page = markup(render_html_report(two_gpu_run()));
  EXPECT_EQ(page.find("repeats"), std::string::npos);
  EXPECT_EQ(page.find("as measured"), std::string::npos);
  EXPECT_EQ(page.find("<ul class=\"recommendations\">"), std::string::npos);
  EXPECT_NE(page.find("<h2>One measurement</h2>"), std::string::npos);
  EXPECT_NE(page.find("<tr><td>all GPUs</td><td>300.0</td><td>2.000</td><td>150.0</td></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><td>GPU 1</td><td>100.0</td><td></td><td>50.0</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("Not shaded (more than 12 occurrences): iteration"), std::string::npos);
}

TEST(SingleRun, TheSweepItSuggestsSpansTheGpusOwnRange) {
  // Without the GPUs' range: placeholders, never a V100's range on another GPU.
  EXPECT_NE(markup(render_html_report(two_gpu_run())).find("--power-limit MIN:MAX:STEP"), std::string::npos);
  auto h100 = two_gpu_run();
  h100.info.min_power_limit_w = 200;
  h100.info.max_power_limit_w = 700;
  EXPECT_NE(markup(render_html_report(h100)).find("--power-limit 200:700:50"), std::string::npos);
  auto v100 = two_gpu_run();
  v100.info.min_power_limit_w = 150;
  v100.info.max_power_limit_w = 300;
  EXPECT_NE(markup(render_html_report(v100)).find("--power-limit 150:300:25"), std::string::npos);
}

TEST(SingleRun, MarkdownHasNoRecommendationPerMetric) {
  const auto md = render_tables_markdown(two_gpu_run());
  EXPECT_EQ(md.find("| metric | best setting |"), std::string::npos) << md;
  EXPECT_NE(render_tables_markdown(testing::sweep_model()).find("| metric | best setting |"),
            std::string::npos);
}

TEST(SingleRun, ASweepIsNotASingleRun) {
  EXPECT_FALSE(testing::sweep_model().single_run.has_value());
}

TEST(DefaultOutput, TheHtmlGoesBesideTheInput) {
  EXPECT_EQ(default_html_path("/runs/sweep.db"), std::filesystem::path("/runs/sweep.html"));
  EXPECT_EQ(default_html_path("run.csv"), std::filesystem::path("run.html"));
  EXPECT_THROW(default_html_path("/runs/old.html"), Error);
}

TEST(DefaultOutput, OnlyAWattwiseReportIsRecognisedAsOne) {
  const wattwise::testing::TempDir temp("ww-report-output");
  const std::filesystem::path& dir = temp.path();
  std::ofstream(dir / "report.html") << render_html_report(testing::sweep_model());
  std::ofstream(dir / "notes.html") << "<html><body>my notes</body></html>";
  EXPECT_TRUE(is_wattwise_report(dir / "report.html"));
  EXPECT_FALSE(is_wattwise_report(dir / "notes.html"));
  EXPECT_FALSE(is_wattwise_report(dir / "missing.html"));
}

}  // namespace
}  // namespace wattwise::report::html
