#include "window/window_energy.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace wattwise::window {
namespace {

// A GPU drawing `power_w`: its counter read every 500 ms, its 20 ms samples drained up to `drained_s`.
sampling::GpuTrace constant_trace(unsigned gpu_index, double power_w, double drained_s) {
  sampling::GpuTrace trace;
  trace.gpu_index = gpu_index;
  for (double t = 0.05; t <= drained_s + 1e-9; t += 0.5)
    trace.energy.push_back(
        {from_seconds(t), Nanos{std::chrono::milliseconds(4)},
         static_cast<std::uint64_t>(std::llround(std::floor(t * 10) / 10 * power_w * 1000))});
  for (double t = 0.02; t <= drained_s + 1e-9; t += 0.02)
    trace.power_samples.push_back({from_seconds(t), power_w});
  return trace;
}

TEST(WindowEnergy, AWindowWithoutRankIsSummedOverEveryJobGpuWithEachShare) {
  const std::vector<sampling::GpuTrace> traces = {constant_trace(4, 300, 3.1), constant_trace(7, 100, 3.1)};
  const auto answer = answer_window(traces, {from_seconds(1.0), from_seconds(2.0), std::nullopt});
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, WindowAnswer::Status::kOk);
  EXPECT_NEAR(answer->energy_j, 400.0, 400 * 0.01);
  EXPECT_DOUBLE_EQ(answer->duration_s, 1.0);
  EXPECT_EQ(answer->method, "samples");
  ASSERT_EQ(answer->gpus.size(), 2u);
  EXPECT_EQ(answer->gpus[0].gpu_index, 4u);
  EXPECT_NEAR(answer->gpus[0].energy_j, 300.0, 3.0);
  EXPECT_EQ(answer->gpus[1].gpu_index, 7u);
  EXPECT_NEAR(answer->gpus[1].energy_j, 100.0, 1.0);
}

TEST(WindowEnergy, ARankPicksItsGpuAsInTheFinalAttribution) {
  const std::vector<sampling::GpuTrace> traces = {constant_trace(0, 300, 3.1), constant_trace(1, 100, 3.1)};
  const auto answer = answer_window(traces, {from_seconds(1.0), from_seconds(2.0), 1});
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->gpus.size(), 1u);
  EXPECT_EQ(answer->gpus[0].gpu_index, 1u);
  EXPECT_NEAR(answer->energy_j, 100.0, 1.0);
  // A rank beyond the job's GPUs says nothing about a GPU (as a marker's): all of them.
  EXPECT_EQ(window_gpus({Nanos{0}, Nanos{1}, 5}, 2), (std::vector<std::size_t>{0, 1}));
}

TEST(WindowEnergy, AWindowWaitsUntilEveryOneOfItsGpusIsDrainedPastItsEnd) {
  const std::vector<sampling::GpuTrace> traces = {constant_trace(0, 300, 3.1), constant_trace(1, 100, 1.5)};
  EXPECT_FALSE(answer_window(traces, {from_seconds(1.0), from_seconds(2.0), std::nullopt}));
  // Rank 0's GPU is drained far enough: its window is answered without waiting for the other GPU.
  EXPECT_TRUE(answer_window(traces, {from_seconds(1.0), from_seconds(2.0), 0}));
}

TEST(WindowEnergy, AFailedGpuMakesTheWindowUnavailableAndSaysWhy) {
  auto lost = constant_trace(2, 300, 1.1);
  lost.failure = sampling::SourceFailure{from_seconds(1.1), true, "GPU is lost"};
  const auto answer = answer_window({lost}, {from_seconds(4.0), from_seconds(5.0), std::nullopt});
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, WindowAnswer::Status::kUnavailable);
  EXPECT_NE(answer->reason.find("GPU 2"), std::string::npos) << answer->reason;
  EXPECT_NE(answer->reason.find("GPU is lost"), std::string::npos) << answer->reason;
}

}  // namespace
}  // namespace wattwise::window
