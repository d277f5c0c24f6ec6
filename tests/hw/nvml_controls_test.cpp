#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "fake_nvml_env.hpp"

namespace wattwise::hw {
namespace {

using testing::FakeNvmlEnv;

// What another process (the fake's control tool) sees in the persistent state.
nlohmann::json state_seen_by_another_process() {
  FILE* pipe = popen(FAKE_NVML_CTL_PATH " show", "r");
  EXPECT_NE(pipe, nullptr);
  std::string text;
  char buffer[512];
  while (fgets(buffer, sizeof(buffer), pipe) != nullptr) text += buffer;
  EXPECT_EQ(pclose(pipe), 0);
  return nlohmann::json::parse(text);
}

TEST(NvmlControls, PowerLimitSetPersistsAcrossSystemsAndProcesses) {
  FakeNvmlEnv env(testing::two_gpu_config());
  FakeNvmlEnv::system()->gpu(0).set_power_limit_w(250);
  auto later = FakeNvmlEnv::system();
  const auto limits = later->gpu(0).power_limits();
  ASSERT_TRUE(limits.has_value());
  EXPECT_DOUBLE_EQ(limits->current_w, 250);
  EXPECT_DOUBLE_EQ(limits->enforced_w, 250);
  EXPECT_DOUBLE_EQ(later->gpu(1).power_limits()->current_w, 600) << "other GPUs keep their limit";
  EXPECT_DOUBLE_EQ(state_seen_by_another_process()["GPU-aaaa"]["power_limit_w"].get<double>(), 250);
}

TEST(NvmlControls, APowerLimitBelowTheLoadCapsThePowerAndKeepsTheCounterMonotone) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);  // draws 300 W
  const auto before = gpu.energy_mj();
  gpu.set_power_limit_w(200);
  std::this_thread::sleep_for(std::chrono::milliseconds(210));
  EXPECT_NEAR(*gpu.power_instant_w(), 200.0, 0.01);
  EXPECT_GE(*gpu.energy_mj(), *before);
  EXPECT_EQ(gpu.telemetry().throttle_reasons, 0x4u) << "SW power cap";
}

TEST(NvmlControls, ALimitOutsideTheConstraintsIsAUsageErrorAndChangesNothing) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  try {
    system->gpu(0).set_power_limit_w(150);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("200..700 W"), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(system->gpu(0).power_limits()->current_w, 700);
}

TEST(NvmlControls, LockedClocksShowInTelemetryAndResetRestoresThem) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);
  gpu.lock_sm_clocks_mhz(1200, 1500);
  gpu.lock_mem_clocks_mhz(1593, 1593);
  EXPECT_EQ(gpu.telemetry().sm_clock_mhz, 1500u);
  EXPECT_EQ(gpu.telemetry().mem_clock_mhz, 1593u);
  EXPECT_EQ(state_seen_by_another_process()["GPU-aaaa"]["sm_lock_mhz"], nlohmann::json::array({1200, 1500}));
  gpu.reset_sm_clocks();
  gpu.reset_mem_clocks();
  EXPECT_EQ(gpu.telemetry().sm_clock_mhz, 1980u);
  EXPECT_EQ(gpu.telemetry().mem_clock_mhz, 2619u);
}

TEST(NvmlControls, NoPermissionSaysThatRootIsNeeded) {
  nlohmann::json config = testing::two_gpu_config();
  config["controls_error"] = "NO_PERMISSION";
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  try {
    system->gpu(1).set_power_limit_w(300);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(message.find("GPU 1: nvmlDeviceSetPowerManagementLimit failed: Insufficient Permissions"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("root"), std::string::npos) << message;
  }
  EXPECT_THROW(system->gpu(0).lock_sm_clocks_mhz(345, 1980), Error);
  EXPECT_DOUBLE_EQ(system->gpu(1).power_limits()->current_w, 600);
}

TEST(NvmlControls, ASetFailureOnOneGpuLeavesTheOthersSettable) {
  nlohmann::json config = testing::two_gpu_config();
  config["gpus"][0]["set_power_limit_error"] = "UNKNOWN";
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  EXPECT_THROW(system->gpu(0).set_power_limit_w(700), Error);
  EXPECT_NO_THROW(system->gpu(1).set_power_limit_w(700));
  EXPECT_DOUBLE_EQ(system->gpu(1).power_limits()->current_w, 700);
}

}  // namespace
}  // namespace wattwise::hw
