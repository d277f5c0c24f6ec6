#include <gtest/gtest.h>

#include "../support/fake_gpu.hpp"
#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"
#include "window/window_energy.hpp"

namespace wattwise::window {
namespace {

using namespace std::chrono_literals;
using wattwise::testing::FakeGpu;

// Two fake H100s (counter posted every 100 ms, 20 ms samples drained every 0.5 s) on a virtual clock.
class LiveWindowsTest : public ::testing::Test {
 protected:
  VirtualClock clock_{0s};
  FakeGpu busy_{clock_, [](Nanos t) { return t % 600ms < 300ms ? 200.0 : 500.0; }};
  FakeGpu steady_{clock_, [](Nanos) { return 100.0; }};
  sampling::Sampler sampler_{{&busy_, &steady_}, clock_};
  sampling::VirtualDriver driver_{sampler_, clock_};
  LiveWindows live_{sampler_, {0, 1}, 500ms};
};

TEST_F(LiveWindowsTest, AWindowIsAnsweredFromTheSamplersReadingsWithEachGpusShare) {
  driver_.run_until(3s);
  const auto answer = live_.answer({1s, 2s, std::nullopt});
  ASSERT_TRUE(answer);
  ASSERT_EQ(answer->status, WindowAnswer::Status::kOk) << answer->reason;
  const double busy_j = busy_.true_energy_j(1s, 2s);
  const double steady_j = steady_.true_energy_j(1s, 2s);
  ASSERT_EQ(answer->gpus.size(), 2u);
  EXPECT_NEAR(answer->gpus[0].energy_j, busy_j, 0.005 * busy_j);
  EXPECT_NEAR(answer->gpus[1].energy_j, steady_j, 0.005 * steady_j);
  EXPECT_NEAR(answer->energy_j, busy_j + steady_j, 0.005 * (busy_j + steady_j));
}

TEST_F(LiveWindowsTest, AWindowPastTheDrainedSamplesWaitsForTheNextDrain) {
  driver_.run_until(3s);
  const WindowRequest request{2800ms, 3300ms, std::nullopt};
  EXPECT_FALSE(live_.answer(request));  // the samples after 3 s are still in the driver's buffer
  driver_.run_until(4s);
  const auto answer = live_.answer(request);
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, WindowAnswer::Status::kOk);
  EXPECT_NEAR(answer->energy_j, busy_.true_energy_j(2800ms, 3300ms) + steady_.true_energy_j(2800ms, 3300ms),
              0.01 * answer->energy_j);
}

TEST_F(LiveWindowsTest, AWindowThatBeginsBeforeTheJobIsUnavailable) {
  driver_.run_until(3s);
  const auto answer = live_.answer({200ms, 1s, std::nullopt});
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, WindowAnswer::Status::kUnavailable);
}

}  // namespace
}  // namespace wattwise::window
