// Issue 15 item 4, end to end: `wattwise report X.db` writes X.html beside it, never replaces a file that
// is not a wattwise report without --force, and a clock-only sweep gets a reference and a report.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class ReportCliTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    env_["WATTWISE_NVML_LIB"] = path("no-such-dir/libnvidia-ml.so.1").string();  // simulated: no driver
  }
  void sweep(const std::vector<std::string>& knobs) {
    std::vector<std::string> args = {"sweep",    "--simulate", "v100:resnet50",
                                     "--repeat", "2",          "--samples",
                                     "2000",     "--db",       path("sweep.db").string()};
    args.insert(args.end(), knobs.begin(), knobs.end());
    const auto r = wattwise(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(ReportCliTest, WithoutOutputTheHtmlGoesBesideTheDatabaseAndStderrSaysWhere) {
  sweep({"--power-limit", "150:300:50"});
  const auto r = wattwise({"report", path("sweep.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("report written to " + path("sweep.html").string()), std::string::npos) << r.err;
  const auto html = read("sweep.html");
  EXPECT_NE(html.find("<section id=\"recommendation\""), std::string::npos);
  EXPECT_NE(html.find("data-metric=\"E\""), std::string::npos);
  // Again: its own report may be replaced; --metric picks the box's metric.
  const auto again = wattwise({"report", path("sweep.db").string(), "--metric", "eds:1.5"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(read("sweep.html").find("data-metric=\"EDS(k=1.5)\""), std::string::npos);
}

TEST_F(ReportCliTest, AFileThatIsNotAReportIsKeptUnlessForced) {
  sweep({"--power-limit", "200:300:50"});
  std::ofstream(path("sweep.html")) << "my notes\n";
  const auto r = wattwise({"report", path("sweep.db").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("is not a wattwise report"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos);
  EXPECT_EQ(read("sweep.html"), "my notes\n");
  const auto forced = wattwise({"report", path("sweep.db").string(), "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_NE(read("sweep.html").find("<section id=\"recommendation\""), std::string::npos);
}

TEST_F(ReportCliTest, AClockOnlySweepIsJudgedAgainstItsHighestClock) {
  sweep({"--sm-clock", "1005,1200,1380"});
  const auto md = wattwise({"report", path("sweep.db").string(), "--format", "md"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("| sm_clock_mhz=1380 (reference) |"), std::string::npos) << md.out;
  const auto html = wattwise({"report", path("sweep.db").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(read("sweep.html").find("<section id=\"recommendation\""), std::string::npos);
}

// Issue 22, item 11: a damaged database (here one whose first page was overwritten with text that reads as
// a runs CSV) was parsed as a CSV. A file named like a database without SQLite's header is a data error now.
TEST_F(ReportCliTest, HostileOrDamagedDatabaseIsNotReadAsACsv) {
  std::ofstream(path("damaged.db")) << "power_limit_w,time_s,energy_j\n200,10,2000\n300,8,2400\n";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", path("damaged.db").string(), "--format", "md"},
        std::vector<std::string>{"analyze", path("damaged.db").string()}}) {
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, 4) << args[0] << ": " << r.out << r.err;
    EXPECT_NE(single_error_line(r).find("no SQLite header"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace wattwise::e2e
