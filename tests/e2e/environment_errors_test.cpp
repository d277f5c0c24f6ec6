// Bad input that wattwise must refuse before (or instead of) running the job: one clear line on stderr, the
// exit code of the right kind (usage 2, environment 3), and no job started.
#include <gtest/gtest.h>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

constexpr int kUsage = 2;
constexpr int kEnvironment = 3;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class EnvironmentErrorsTest : public E2eTest {
 protected:
  // A job that leaves a file behind: if the file exists, the job ran.
  std::vector<std::string> touch_job() const { return {E2E_JOB, "touch", path("job-ran").string()}; }
  bool job_ran() const { return std::filesystem::exists(path("job-ran")); }
  std::vector<std::string> measure(std::vector<std::string> flags) const {
    flags.insert(flags.begin(), "measure");
    flags.push_back("--");
    for (const auto& arg : touch_job()) flags.push_back(arg);
    return flags;
  }
};

TEST_F(EnvironmentErrorsTest, MissingDriverSaysInstallItOrSimulate) {
  use_config(two_gpu_config());
  env_["WATTWISE_NVML_LIB"] = path("no-such-dir/libnvidia-ml.so.1").string();
  const auto r = wattwise(measure({}));
  EXPECT_EQ(r.exit_code, kEnvironment);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "install the driver")) << line;
  EXPECT_TRUE(contains(line, "--simulate")) << line;
  EXPECT_FALSE(job_ran());

  const auto info = wattwise({"info"});
  EXPECT_EQ(info.exit_code, kEnvironment);
  EXPECT_TRUE(contains(single_error_line(info), "install the driver"));
}

// Issue 22, item 11: exporter, counter and restore told users to "use --simulate", a flag they do not have.
TEST_F(EnvironmentErrorsTest, CommandsWithoutSimulateDoNotSuggestIt) {
  use_config(two_gpu_config());
  env_["WATTWISE_NVML_LIB"] = path("no-such-dir/libnvidia-ml.so.1").string();
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"exporter", "--listen", "127.0.0.1:1"},
        std::vector<std::string>{"counter", "--gpus", "0"}}) {
    const auto r = wattwise(args);
    EXPECT_EQ(r.exit_code, kEnvironment) << args[0] << ": " << r.err;
    const auto line = single_error_line(r);
    EXPECT_TRUE(contains(line, "install the driver")) << line;
    EXPECT_FALSE(contains(line, "--simulate")) << line;
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"info"}, measure({})}) {
    const auto r = wattwise(args);
    EXPECT_TRUE(contains(single_error_line(r), "or use --simulate GPU:MODEL")) << r.err;
  }
}

TEST_F(EnvironmentErrorsTest, InitErrorFromTheDriverIsAnEnvironmentErrorWithAdvice) {
  // Each injected nvmlInit failure, and a word of the advice that fits it.
  const std::vector<std::pair<std::string, std::string>> cases = {{"DRIVER_NOT_LOADED", "--simulate"},
                                                                  {"LIB_RM_VERSION_MISMATCH", "reboot"}};
  for (const auto& [init_error, advice] : cases) {
    auto config = two_gpu_config();
    config["init_error"] = init_error;
    use_config(config);
    const auto r = wattwise(measure({}));
    EXPECT_EQ(r.exit_code, kEnvironment) << init_error;
    const auto line = single_error_line(r);
    EXPECT_TRUE(contains(line, "NVML")) << line;
    EXPECT_TRUE(contains(line, advice)) << line;
    EXPECT_FALSE(job_ran()) << init_error;
  }
}

TEST_F(EnvironmentErrorsTest, UnknownGpuIndexIsAUsageErrorListingTheGpusPresent) {
  use_config(two_gpu_config());
  const auto r = wattwise(measure({"--gpus", "7"}));
  EXPECT_EQ(r.exit_code, kUsage);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "7")) << line;
  EXPECT_TRUE(contains(line, "GPU-e2e-square")) << line;
  EXPECT_TRUE(contains(line, "GPU-e2e-constant")) << line;
  EXPECT_FALSE(job_ran());
}

TEST_F(EnvironmentErrorsTest, UnknownGpuUuidIsAUsageErrorListingTheGpusPresent) {
  use_config(two_gpu_config());
  const auto r = wattwise(measure({"--gpus", "GPU-not-here"}));
  EXPECT_EQ(r.exit_code, kUsage);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "GPU-not-here")) << line;
  EXPECT_TRUE(contains(line, "GPU-e2e-square")) << line;
  EXPECT_TRUE(contains(line, "GPU-e2e-constant")) << line;
  EXPECT_FALSE(job_ran());
}

TEST_F(EnvironmentErrorsTest, CommandThatDoesNotExistIsCommandNotFound) {
  use_config(two_gpu_config());
  const auto r = wattwise({"measure", "--json", path("m.json").string(), "--", "no-such-command-e2e"});
  EXPECT_EQ(r.exit_code, kEnvironment);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "command not found")) << line;
  EXPECT_TRUE(contains(line, "no-such-command-e2e")) << line;
  EXPECT_LT(r.wall_s, 5.0);
}

TEST_F(EnvironmentErrorsTest, IntervalBelowTheMinimumIsAUsageErrorNamingIt) {
  use_config(two_gpu_config());
  const auto r = wattwise(measure({"--interval", "0.1"}));
  EXPECT_EQ(r.exit_code, kUsage);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "--interval '0.1'")) << line;
  EXPECT_TRUE(contains(line, "milliseconds as a number from 1 to 10000")) << line;
  EXPECT_FALSE(job_ran());
}

TEST_F(EnvironmentErrorsTest, UnwritableTracePathFailsBeforeTheJobStarts) {
  use_config(two_gpu_config());
  const auto r = wattwise(measure({"--trace", "/nonexistent/dir/t.csv"}));
  EXPECT_EQ(r.exit_code, kEnvironment);
  const auto line = single_error_line(r);
  EXPECT_TRUE(contains(line, "/nonexistent/dir/t.csv")) << line;
  EXPECT_FALSE(job_ran()) << "the job ran although its trace could never be written";
}

TEST_F(EnvironmentErrorsTest, UnwritableJsonPathFailsBeforeTheJobStarts) {
  use_config(two_gpu_config());
  const auto r = wattwise(measure({"--json", "/nonexistent/dir/m.json"}));
  EXPECT_EQ(r.exit_code, kEnvironment);
  EXPECT_TRUE(contains(single_error_line(r), "/nonexistent/dir/m.json"));
  EXPECT_FALSE(job_ran());
}

}  // namespace
}  // namespace wattwise::e2e
