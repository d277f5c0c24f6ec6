// A GPU lost while `measure` samples it (the fake driver's `lost_after_s`): no abort, the job runs to its
// end, both GPUs have a result, the lost one says when and why and covers only the time up to then, and the
// exit code is the job's when it failed, else 3 (the figures are incomplete).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "e2e_fixture.hpp"

namespace wattwise::e2e {
namespace {

constexpr int kEnvironment = 3;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class GpuLostTest : public E2eTest {
 protected:
  void SetUp() override {
    E2eTest::SetUp();
    auto config = two_gpu_config();
    config["gpus"][1]["lost_after_s"] = 1.0;  // after nvmlInit, well inside the job's 2.5 s
    use_config(config);
  }
  ProcessResult measure(const std::string& shell_job) {
    return wattwise({"measure", "--json", path("m.json").string(), "--trace", path("t.csv").string(), "--",
                     "/bin/sh", "-c", shell_job});
  }
  // The time (s since the job's start) of GPU `gpu`'s last counter read at or before `until_s`, from the
  // trace's rows (time_s, gpu, energy_mj, ...; energy_mj is empty on rows that are not a counter read).
  std::optional<double> last_counter_read_s(int gpu, double until_s) const {
    std::optional<double> last;
    for (const auto& line : read_lines("t.csv")) {
      if (line.empty() || line[0] == '#' || line.rfind("time_s,", 0) == 0) continue;
      std::stringstream row(line);
      std::string t, g, energy_mj;
      std::getline(row, t, ',');
      std::getline(row, g, ',');
      std::getline(row, energy_mj, ',');
      if (std::stoi(g) != gpu || energy_mj.empty() || std::stod(t) > until_s) continue;
      last = std::max(last.value_or(-1e9), std::stod(t));
    }
    return last;
  }
};

TEST_F(GpuLostTest, TheJobRunsOnBothGpusHaveAResultAndTheLostOneSaysWhen) {
  const auto r = measure("sleep 2.5");
  ASSERT_TRUE(r.exit_code.has_value()) << "killed by signal " << r.signal.value_or(0) << "\n" << r.err;
  EXPECT_EQ(*r.exit_code, kEnvironment) << r.err;
  EXPECT_FALSE(contains(r.err, "terminate called")) << r.err;
  // One warning line for the lost GPU, none for the healthy one.
  EXPECT_TRUE(contains(r.err, "wattwise: warning: GPU 1 (GPU-e2e-constant) was lost at")) << r.err;
  EXPECT_TRUE(contains(r.err, "GPU is lost")) << r.err;
  EXPECT_FALSE(contains(r.err, "warning: GPU 0 (")) << r.err;
  EXPECT_EQ(r.err.find("warning: GPU 1"), r.err.rfind("warning: GPU 1")) << "one line per GPU\n" << r.err;
  EXPECT_TRUE(contains(r.err, "partial: GPU lost at")) << r.err;

  const auto m = read_json("m.json");
  EXPECT_FALSE(m.at("complete").get<bool>());
  EXPECT_GE(m.at("wall_s").get<double>(), 2.4);
  const auto& healthy = m.at("gpus").at(0);
  EXPECT_TRUE(healthy.at("complete").get<bool>());
  EXPECT_TRUE(healthy.at("failure").is_null());
  EXPECT_EQ(healthy.at("method"), "counter");
  // The square wave (500 W and 100 W) draws at least 100 W at every moment of the run.
  const double healthy_j = healthy.at("energy_j").get<double>();
  EXPECT_GT(healthy_j, 0.9 * 100 * m.at("wall_s").get<double>());

  const auto& lost = m.at("gpus").at(1);
  EXPECT_FALSE(lost.at("complete").get<bool>());
  const auto& failure = lost.at("failure");
  ASSERT_TRUE(failure.is_object()) << lost.dump();
  EXPECT_TRUE(failure.at("gpu_lost").get<bool>());
  EXPECT_TRUE(contains(failure.at("error").get<std::string>(), "GPU is lost")) << failure.dump();
  EXPECT_TRUE(contains(failure.at("label").get<std::string>(), "partial: GPU lost at")) << failure.dump();
  const double at_s = failure.at("at_s").get<double>();
  const double covered_s = failure.at("covered_s").get<double>();
  EXPECT_GT(at_s, 0.0);
  EXPECT_LT(at_s, 2.0);
  EXPECT_LE(covered_s, at_s);
  // Covered up to the last counter read before the loss, as the trace has it. Not a wall-clock bound: locked
  // reads come one every 10 postings (~1 s), so the last read before a loss at 1.0 s lay anywhere from the
  // learning burst's end (~0.15 s) on, and a starved runner delays it further (CI: covered 0.394 s; two busy
  // loops here: 0.168 s, 0.82 s behind, against the earlier bound of 1.0 s behind). What the attribution must
  // do is end the span at that read, not before it (nothing covered, or an earlier read) nor after the loss.
  const auto last_read_s = last_counter_read_s(1, at_s);
  ASSERT_TRUE(last_read_s.has_value()) << "no counter read of GPU 1 before its loss in the trace";
  EXPECT_GT(covered_s, 0.0);
  EXPECT_NEAR(covered_s, std::max(*last_read_s, 0.0), 1e-5);  // the trace's times have 6 decimals
  // Its energy is the constant draw over the covered span only, not over the whole job.
  ASSERT_TRUE(lost.at("energy_j").is_number()) << lost.dump();
  EXPECT_NEAR(lost.at("energy_j").get<double>(), kConstantPowerW * covered_s,
              0.05 * kConstantPowerW * covered_s + 30);
  EXPECT_NEAR(lost.at("avg_power_w").get<double>(), kConstantPowerW, 0.1 * kConstantPowerW);
}

TEST_F(GpuLostTest, AFailedJobKeepsItsOwnExitCode) {
  const auto r = measure("sleep 2.5; exit 7");
  ASSERT_TRUE(r.exit_code.has_value()) << r.err;
  EXPECT_EQ(*r.exit_code, 7) << r.err;
  EXPECT_TRUE(contains(r.err, "was lost at")) << r.err;
  EXPECT_FALSE(read_json("m.json").at("complete").get<bool>());
}

TEST_F(GpuLostTest, ASweepStoresTheRunAndStopsWithExit3) {
  // The first run sees the loss and is stored as failed; the second run's read-back fails on the lost GPU,
  // which stops the sweep (exit 3) instead of aborting it.
  const auto r =
      wattwise({"sweep", "--db", path("s.db").string(), "--repeat", "2", "--", "/bin/sh", "-c", "sleep 2.5"});
  ASSERT_TRUE(r.exit_code.has_value()) << "killed by signal " << r.signal.value_or(0) << "\n" << r.err;
  EXPECT_EQ(*r.exit_code, kEnvironment) << r.err;
  EXPECT_FALSE(contains(r.err, "terminate called")) << r.err;
  EXPECT_TRUE(contains(r.err, "GPU is lost")) << r.err;
  EXPECT_TRUE(contains(r.err, "1 failed")) << r.err;
}

}  // namespace
}  // namespace wattwise::e2e
