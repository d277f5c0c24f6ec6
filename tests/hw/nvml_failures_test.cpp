#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/error.hpp"
#include "fake_nvml_env.hpp"
#include "hw/gpu.hpp"

namespace wattwise::hw {
namespace {

using testing::FakeNvmlEnv;

std::string load_error(const std::string& library) {
  try {
    FakeNvmlEnv::load(library);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    return e.what();
  }
  ADD_FAILURE() << "expected the load to fail";
  return "";
}

// The hint "--simulate" is the CLI's to add, for the commands that have the flag (issue 22, item 11).
TEST(NvmlFailures, AMissingLibrarySaysThereIsNoDriver) {
  const std::string message = load_error("/nonexistent/libnvidia-ml.so.1");
  EXPECT_NE(message.find("no NVIDIA driver found"), std::string::npos) << message;
  EXPECT_EQ(message.find("--simulate"), std::string::npos) << message;
}

TEST(NvmlFailures, DriverNotLoadedAtInitIsExplained) {
  nlohmann::json config = testing::two_gpu_config();
  config["init_error"] = "DRIVER_NOT_LOADED";
  FakeNvmlEnv env(config);
  const std::string message = load_error(FAKE_NVML_PATH);
  EXPECT_NE(message.find("Driver Not Loaded"), std::string::npos) << message;
  EXPECT_NE(message.find("kernel driver"), std::string::npos) << message;
}

TEST(NvmlFailures, LibraryAndDriverVersionMismatchAsksForAReboot) {
  nlohmann::json config = testing::two_gpu_config();
  config["init_error"] = "LIB_RM_VERSION_MISMATCH";
  FakeNvmlEnv env(config);
  const std::string message = load_error(FAKE_NVML_PATH);
  EXPECT_NE(message.find("version mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("reboot"), std::string::npos) << message;
}

TEST(NvmlFailures, ALostGpuThrowsAnErrorNamingTheGpuAndTheCall) {
  nlohmann::json config = testing::two_gpu_config();
  config["gpus"][1]["lost_after_s"] = 0.2;
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  EXPECT_TRUE(system->gpu(1).energy_mj().has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  try {
    system->gpu(1).energy_mj();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(message.find("GPU 1: nvmlDeviceGetTotalEnergyConsumption failed: GPU is lost"),
              std::string::npos)
        << message;
  }
  EXPECT_TRUE(system->gpu(0).energy_mj().has_value()) << "the other GPU still reads";
}

TEST(NvmlFailures, ALostGpuThrowsGpuLostErrorOnReadingsAndControlsFromThenOn) {
  nlohmann::json config = testing::two_gpu_config();
  config["gpus"][1]["lost_after_s"] = 0.2;
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  try {
    system->gpu(1).power_instant_w();
    FAIL() << "expected GpuLostError";
  } catch (const GpuLostError& e) {
    EXPECT_EQ(e.gpu_index(), 1u);
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
    EXPECT_NE(std::string(e.what()).find("GPU is lost"), std::string::npos) << e.what();
  }
  // Every later call says the same, readings and controls alike, and the message names the first failure.
  EXPECT_THROW(system->gpu(1).telemetry(), GpuLostError);
  EXPECT_THROW(system->gpu(1).power_samples_since(0), GpuLostError);
  EXPECT_THROW(system->gpu(1).set_power_limit_w(300), GpuLostError);
  EXPECT_THROW(system->gpu(1).reset_sm_clocks(), GpuLostError);
  try {
    system->gpu(1).energy_mj();
  } catch (const GpuLostError& e) {
    EXPECT_NE(std::string(e.what()).find("nvmlDeviceGetFieldValues"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(system->gpu(0).energy_mj().has_value()) << "the other GPU still reads";
  EXPECT_NO_THROW(system->gpu(0).set_power_limit_w(300));
}

TEST(NvmlFailures, OtherDriverErrorsAreNotGpuLost) {
  nlohmann::json config = testing::two_gpu_config();
  config["gpus"][0]["set_power_limit_error"] = "UNKNOWN";
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  try {
    system->gpu(0).set_power_limit_w(300);
    FAIL() << "expected an error";
  } catch (const GpuLostError&) {
    FAIL() << "UNKNOWN is not a lost GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kEnvironment);
  }
}

}  // namespace
}  // namespace wattwise::hw
