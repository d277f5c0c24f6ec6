// Issue 21 item 5 end to end: a GPU-count sweep (`--param gpus=1,2,4 --job-gpus {gpus}`) on a fake node of
// 4 GPUs, where one GPU does the work with the least energy of the job's own GPUs (4 GPUs: +5%) but the
// three it leaves idle draw 80 W each. By default the sweep samples every GPU, judges on the node's energy,
// says so, recommends all four GPUs, and shows the job's-GPUs scope beside it with a warning that they pick
// differently; --energy-scope job judges on the job's GPUs alone.
#include <gtest/gtest.h>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

constexpr double kBusyW = 300;  // GPU 0
constexpr double kIdleW = 80;   // GPUs 1-3, busy or idle (the fake's power does not follow the job)

nlohmann::json four_gpu_config() {
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < 4; ++i) {
    gpus.push_back({{"name", "NVIDIA H100 80GB HBM3"},
                    {"uuid", "GPU-scope-" + std::to_string(i)},
                    {"pci_bus_id", "00000000:1" + std::to_string(i) + ":00.0"},
                    {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 700}}},
                    {"profile", {{{"duration_s", 1.0}, {"watts", i == 0 ? kBusyW : kIdleW}}}}});
  }
  return {{"driver_version", "580.159.04"}, {"gpus", gpus}};
}

// The training time per GPU count (jobs/gpu_count_job.py).
double training_s(int gpus) {
  return gpus == 1 ? 1.0 : gpus == 2 ? 0.8132 : 0.5833;
}

class EnergyScopeTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(four_gpu_config());
    SpawnOptions options;
    options.guard = std::chrono::seconds(120);
    sweep_ = wattwise(
        {"sweep", "--read-only", "--no-powercap", "--db", db(), "--param", "gpus=1,2,4", "--job-gpus",
         "{gpus}", "--repeat", "2", "--", PYTHON3, std::string(E2E_JOBS_DIR) + "/gpu_count_job.py", "{gpus}"},
        options);
    ASSERT_EQ(sweep_.exit_code, 0) << sweep_.err;
  }
  std::string db() const { return path("sweep.db").string(); }
  // `analyze --json` of the sweep with `flags`.
  nlohmann::json analysis(std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"analyze", db(), "--json"});
    const auto r = wattwise(flags);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  }

  static double pick(const nlohmann::json& recommendations, const std::string& metric) {
    for (const auto& r : recommendations)
      if (r.at("metric") == metric) return r.at("setting").at("gpus").get<double>();
    ADD_FAILURE() << "no " << metric << " in " << recommendations.dump();
    return 0;
  }

  static double energy_of(const nlohmann::json& settings, int gpus) {
    for (const auto& s : settings)
      if (s.at("setting").at("gpus") == gpus) return s.at("energy_j").at("mean").get<double>();
    ADD_FAILURE() << "no gpus=" << gpus << " in " << settings.dump();
    return 0;
  }

  ProcessResult sweep_;
};

TEST_F(EnergyScopeTest, DefaultJudgesOnTheNodeAndRecommendsAllGpus) {
  // The sweep says what it samples and what it judges on, and its own table recommends 4 GPUs for E.
  EXPECT_NE(
      sweep_.err.find("the GPU count varies (--job-gpus {gpus}): every GPU the sweep can see is sampled "
                      "(4), and the runs are judged on the node's energy"),
      std::string::npos)
      << sweep_.err;
  EXPECT_NE(sweep_.out.find("energy of the node (every measured GPU, idle ones included)"), std::string::npos)
      << sweep_.out;
  EXPECT_NE(sweep_.out.find("warning: the energy scopes pick differently for E: gpus=4 on the node's energy "
                            "(judged), gpus=1 on the job's GPUs' alone"),
            std::string::npos)
      << sweep_.out;

  const auto json = analysis();
  EXPECT_EQ(json.at("judged_on").at("phase"), "training");
  const auto& scope = json.at("energy_scope");
  EXPECT_EQ(scope.at("scope"), "node");
  EXPECT_TRUE(scope.at("automatic").get<bool>());
  EXPECT_TRUE(scope.at("gpu_count_varies").get<bool>());
  EXPECT_EQ(scope.at("most_idle_gpus"), 3);
  EXPECT_EQ(scope.at("node_parts"), nlohmann::json::array({"gpus"}));
  EXPECT_DOUBLE_EQ(pick(json.at("recommendations"), "E"), 4);
  // Both scopes are shown: the node's energies judged, the job's GPUs' beside them, each as the fake draws.
  const double node_w = kBusyW + 3 * kIdleW;
  for (int gpus : {1, 2, 4}) {
    EXPECT_NEAR(energy_of(json.at("settings"), gpus), node_w * training_s(gpus),
                0.08 * node_w * training_s(gpus));
    const double job_j = (kBusyW + (gpus - 1) * kIdleW) * training_s(gpus);
    EXPECT_NEAR(energy_of(scope.at("other").at("settings"), gpus), job_j, 0.08 * job_j);
  }
  EXPECT_EQ(scope.at("other").at("scope"), "job");
  EXPECT_DOUBLE_EQ(pick(scope.at("other").at("recommendations"), "E"), 1);
  ASSERT_FALSE(scope.at("disagreements").empty());
  EXPECT_EQ(scope.at("disagreements").at(0).get<std::string>().rfind("E: gpus=4", 0), 0u) << scope.dump();
}

TEST_F(EnergyScopeTest, EnergyScopeJobJudgesTheJobsGpusAlone) {
  const auto json = analysis({"--energy-scope", "job"});
  EXPECT_EQ(json.at("energy_scope").at("scope"), "job");
  EXPECT_FALSE(json.at("energy_scope").at("automatic").get<bool>());
  EXPECT_DOUBLE_EQ(pick(json.at("recommendations"), "E"), 1);
  EXPECT_DOUBLE_EQ(pick(json.at("energy_scope").at("other").at("recommendations"), "E"), 4);

  const auto text = wattwise({"analyze", db(), "--energy-scope", "job"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("energy of the job's GPUs (--energy-scope node for the node's"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("node energy"), std::string::npos) << text.out;  // the other scope's column

  const auto bad = wattwise({"analyze", db(), "--energy-scope", "rack"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(single_error_line(bad).find("--energy-scope 'rack': give job"), std::string::npos) << bad.err;
}

TEST_F(EnergyScopeTest, ReportShowsBothScopes) {
  const auto md = wattwise({"report", db(), "--format", "md", "-o", "-"});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_NE(md.out.find("energy of the node (every measured GPU, idle ones included)"), std::string::npos)
      << md.out;
  EXPECT_NE(md.out.find("on job GPUs' energy"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("**Warning:** the energy scopes pick differently for E"), std::string::npos)
      << md.out;
  const auto html = wattwise({"report", db(), "-o", path("r.html").string()});
  ASSERT_EQ(html.exit_code, 0) << html.err;
}

}  // namespace
}  // namespace wattwise::e2e
