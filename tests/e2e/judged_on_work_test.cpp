// Issue 12 item 3 end to end: a job-knob sweep whose start-up dominates each run is judged on the marked
// training phase by default, says so, warns about the start-up, and `--phase run` gives the whole run.
#include <gtest/gtest.h>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class JudgedOnWorkTest : public E2eTest {
 protected:
  // Batch 64 and 256 of startup_then_training.py, twice each, on the fake GPU of constant power.
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
    SpawnOptions options;
    options.guard = std::chrono::seconds(120);
    sweep_ = wattwise({"sweep", "--db", db(), "--gpus", "1", "--param", "batch=64,256", "--repeat", "2", "--",
                       PYTHON3, std::string(E2E_JOBS_DIR) + "/startup_then_training.py", "{batch}"},
                      options);
    ASSERT_EQ(sweep_.exit_code, 0) << sweep_.err;
  }
  std::string db() const { return path("sweep.db").string(); }

  nlohmann::json analyze_json(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"analyze", db(), "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  static double energy_pick(const nlohmann::json& analysis) {
    for (const auto& r : analysis.at("recommendations"))
      if (r.at("metric") == "E") return r.at("setting").at("batch").get<double>();
    return 0;
  }

  ProcessResult sweep_;
};

TEST_F(JudgedOnWorkTest, DefaultAnalysisRecommendsByTheTrainingPhaseAndSaysSo) {
  const auto json = analyze_json();
  EXPECT_EQ(json.at("judged_on").at("phase"), "training");
  EXPECT_TRUE(json.at("judged_on").at("automatic").get<bool>());
  EXPECT_DOUBLE_EQ(energy_pick(json), 256);  // trains for a quarter of the time at the same power
  // The whole runs would not say so: batch 256 starts up for twice as long.
  EXPECT_GT(json.at("judged_on").at("startup_share_mean").get<double>(), 0.5);
  EXPECT_TRUE(json.at("judged_on").at("startup_warning").is_string());

  const auto text = wattwise({"analyze", db()});
  EXPECT_NE(text.out.find("judged on phase 'training', the job's work (use --phase run for the whole run)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("warning: start-up (run time outside phase 'training') is"), std::string::npos)
      << text.out;
  // The sweep's own analysis at its end is the same default.
  EXPECT_NE(sweep_.out.find("judged on phase 'training'"), std::string::npos) << sweep_.out;
}

TEST_F(JudgedOnWorkTest, PhaseRunJudgesTheWholeRunStartUpIncluded) {
  const auto json = analyze_json({"--phase", "run"});
  EXPECT_EQ(json.at("judged_on").at("phase"), "run");
  EXPECT_TRUE(json.at("judged_on").at("startup_warning").is_string());
  // Each run's time is the whole process: start-up (0.5 s, 1.0 s) and training (0.4 s, 0.1 s) at least;
  // the training phase alone is 0.4 s and 0.1 s.
  for (const auto& s : json.at("settings")) {
    const double batch = s.at("setting").at("batch");
    EXPECT_GE(s.at("time_s").at("mean").get<double>(), batch == 64 ? 0.9 : 1.1) << s.dump();
  }
  const auto training = analyze_json();
  for (const auto& s : training.at("settings")) {
    const double batch = s.at("setting").at("batch");
    EXPECT_NEAR(s.at("time_s").at("mean").get<double>(), batch == 64 ? 0.4 : 0.1, 0.05) << s.dump();
  }
}

TEST_F(JudgedOnWorkTest, ReportSaysWhatItJudgedOn) {
  const auto md = wattwise({"report", db(), "--format", "md", "-o", "-"});
  EXPECT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("judged on phase 'training'"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**Warning:** start-up"), std::string::npos) << md.out;
  const auto whole = wattwise({"report", db(), "--format", "md", "-o", "-", "--phase", "run"});
  EXPECT_NE(whole.out.find("judged on the whole run, start-up included"), std::string::npos) << whole.out;
}

TEST_F(JudgedOnWorkTest, UnknownPhaseIsRefusedInOneLine) {
  const auto r = wattwise({"analyze", db(), "--phase", "trainig"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("phases seen: 'training', 'epoch'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace wattwise::e2e
