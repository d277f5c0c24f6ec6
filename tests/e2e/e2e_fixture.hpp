#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "subprocess.hpp"

namespace wattwise::e2e {

// Two fake GPUs that tell each other apart in every output:
// GPU 0 "GPU-e2e-square": a square wave, 500 W then 100 W, 0.5 s each (period 1 s), anchored at monotonic 0;
//   power limits min 200 / default 700 / current 600 / max 700 W.
// GPU 1 "GPU-e2e-constant": a constant kConstantPowerW; limits min 150 / default 310 / current 320 / max 350
// W,
//   all above its draw, so no cap changes the expected energy.
nlohmann::json two_gpu_config();

inline constexpr double kConstantPowerW = 300;  // GPU 1's draw, below all of its limits

// Each test gets its own temporary directory, fake NVML config and a child environment that names the fake
// driver; nothing of the test runner's environment leaks into the child but PATH, HOME, TMPDIR and LANG.
class E2eTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Writes the fake driver's config into the temp dir and points the child environment at it.
  void use_config(const nlohmann::json& config);

  // Runs the wattwise binary with these arguments in the current environment.
  ProcessResult wattwise(const std::vector<std::string>& args, SpawnOptions options = {});
  // Runs any program with the current environment.
  ProcessResult run(const std::vector<std::string>& argv, SpawnOptions options = {});

  std::filesystem::path path(const std::string& name) const { return dir_ / name; }
  nlohmann::json read_json(const std::string& name) const;
  std::vector<std::string> read_lines(const std::string& name) const;

  wattwise::testing::TempDir temp_{"wattwise-e2e"};
  const std::filesystem::path& dir_ = temp_.path();
  Environment env_;
};

// Expects exactly one line on stderr, starting "wattwise: ", and returns it.
std::string single_error_line(const ProcessResult& r);

// The tolerance an accuracy test allows a figure whose own error bar is `bar`. Normally `strict`. Under
// tests/e2e/load_test.sh (every core busy: WATTWISE_E2E_UNDER_LOAD set) the claim is the one wattwise makes
// for a starved node: the truth lies within the figure's error bar, which the accounting widens when its
// reads were late or few (issue 20 item 3), so max(strict, bar).
double accuracy_tolerance(double strict, double bar);

// The absolute CLOCK_MONOTONIC time (s) the job started at, found from the "anchor" point marker whose
// timestamp the job wrote to anchor_file (ns): begin_s in the JSON is that timestamp minus the job's start.
double job_start_monotonic_s(const nlohmann::json& measurement, const std::filesystem::path& anchor_file);

}  // namespace wattwise::e2e
