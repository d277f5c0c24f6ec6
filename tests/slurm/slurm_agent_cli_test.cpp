// The pieces of `sweep --slurm` that need no cluster, with the real binary on the fake NVML: the per-node
// agent (`measure --power-limit W`) holding its GPUs at the limit while its job runs and putting them back,
// and every refusal, each before anything is changed or run.
#include <gtest/gtest.h>

#include <fstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

class SlurmAgentCliTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    use_config(two_gpu_config());
    env_["WATTWISE_STATE_DIR"] = path("state").string();
  }
  // GPU 0's and GPU 1's power limits as the fake driver holds them now.
  std::pair<double, double> limits_now() {
    const auto r = run({FAKE_NVML_CTL, "show"});
    const auto state = nlohmann::json::parse(r.out);
    return {state.at("GPU-e2e-square").at("power_limit_w"), state.at("GPU-e2e-constant").at("power_limit_w")};
  }
  // A job that records the driver's state while it runs.
  std::vector<std::string> recording_job() const {
    return {"/bin/sh", "-c", std::string(FAKE_NVML_CTL) + " show > " + path("seen.json").string()};
  }
};

TEST_F(SlurmAgentCliTest, PowerLimitIsHeldOnEveryJobGpuWhileTheJobRunsThenRestored) {
  const auto before = limits_now();  // 600 W and 320 W (two_gpu_config)
  std::vector<std::string> args = {"measure", "--power-limit",         "300",
                                   "--json",  path("m.json").string(), "--"};
  for (const auto& a : recording_job()) args.push_back(a);
  const auto r = wattwise(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto seen = read_json("seen.json");
  EXPECT_EQ(seen.at("GPU-e2e-square").at("power_limit_w"), 300);
  EXPECT_EQ(seen.at("GPU-e2e-constant").at("power_limit_w"), 300);
  EXPECT_EQ(limits_now(), before);
  const auto settings = read_json("m.json").at("settings");
  EXPECT_EQ(settings.at("power_limit_w"), 300);
  EXPECT_TRUE(settings.at("restored").get<bool>());
  ASSERT_EQ(settings.at("gpus").size(), 2u);
  EXPECT_EQ(settings.at("gpus")[1].at("uuid"), "GPU-e2e-constant");
  EXPECT_EQ(settings.at("gpus")[1].at("enforced_power_limit_w"), 300);
}

TEST_F(SlurmAgentCliTest, MeasureWithoutSettingsWritesNullSettingsAndChangesNothing) {
  std::vector<std::string> args = {"measure", "--json", path("m.json").string(), "--"};
  for (const auto& a : recording_job()) args.push_back(a);
  ASSERT_EQ(wattwise(args).exit_code, 0);
  EXPECT_TRUE(read_json("m.json").at("settings").is_null());
  EXPECT_EQ(read_json("seen.json").at("GPU-e2e-square").at("power_limit_w"), 600);
}

TEST_F(SlurmAgentCliTest, AgentRefusalsAreOneLineBeforeAnythingChangesOrRuns) {
  const auto before = limits_now();
  const std::vector<std::string> job = {"/usr/bin/touch", path("ran").string()};
  struct Case {
    std::vector<std::string> flags;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--power-limit", "300,400"}, 2, "takes one value"},
      {{"--power-limit", "100"}, 2, "outside the valid range 200-700 W"},  // below GPU 0's minimum
      {{"--sm-clock", "supported"}, 2, "takes one value"},
      {{"--power-limit", "300", "--simulate", "v100:resnet50"}, 2, "--simulate"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"measure"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const bool simulated = std::find(c.flags.begin(), c.flags.end(), "--simulate") != c.flags.end();
    if (!simulated) {
      args.push_back("--");
      args.insert(args.end(), job.begin(), job.end());
    }
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.flags.front() << " " << r.err;
    EXPECT_NE(single_error_line(r).find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("ran"))) << c.flags.front();
    EXPECT_EQ(limits_now(), before) << c.flags.front();
  }
}

TEST_F(SlurmAgentCliTest, SweepSlurmRefusesOutsideAnAllocationAndLocalOnlyFlags) {
  const std::vector<std::string> job = {"--", "/usr/bin/touch", path("ran").string()};
  auto sweep = [&](std::vector<std::string> flags) {
    std::vector<std::string> args = {"sweep", "--slurm", "--power-limit",
                                     "300",   "--db",    path("s.db").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), job.begin(), job.end());
    return wattwise(args);
  };
  const auto without_slurm = wattwise({"sweep", "--nodes", "1,2", "--db", path("s.db").string(), "--",
                                       "/usr/bin/touch", path("ran").string()});
  EXPECT_EQ(without_slurm.exit_code, 2);
  EXPECT_NE(single_error_line(without_slurm).find("add --slurm"), std::string::npos);
  auto r = sweep({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(single_error_line(r).find("SLURM_JOB_ID is not set"), std::string::npos);
  env_["SLURM_JOB_ID"] = "77";
  for (const auto& flags : std::vector<std::vector<std::string>>{
           {"--cooldown"}, {"--trace-dir", path("t").string()}, {"--nodes", "0,2"}, {"--job-gpus", "1"}}) {
    r = sweep(flags);
    EXPECT_EQ(r.exit_code, 2) << flags.front() << " " << r.err;
    EXPECT_NE(single_error_line(r).find(flags.front()), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(path("ran")));
  EXPECT_FALSE(std::filesystem::exists(path("s.db")));
}

TEST_F(SlurmAgentCliTest, SweepSlurmDryRunPrintsEachRunsSrunLine) {
  env_["SLURM_JOB_ID"] = "77";
  const auto r =
      wattwise({"sweep", "--slurm", "--dry-run", "--nodes", "1,2", "--power-limit", "300,400",
                "--srun-arg=--gres=gpu:2", "--db", path("s.db").string(), "--", "train", "{nodes}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("--nodes=2 --ntasks-per-node=1 --kill-on-bad-exit=1 --gres=gpu:2 "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("measure --no-status --out-dir " + path("s.db.nodes").string() + "/run-0003"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("--power-limit 400 -- train 2"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(path("s.db")));
}

}  // namespace
}  // namespace wattwise::e2e
