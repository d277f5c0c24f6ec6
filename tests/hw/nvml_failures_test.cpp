#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/error.hpp"
#include "fake_nvml_env.hpp"

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

TEST(NvmlFailures, AMissingLibrarySaysThereIsNoDriverAndOffersSimulation) {
  const std::string message = load_error("/nonexistent/libnvidia-ml.so.1");
  EXPECT_NE(message.find("no NVIDIA driver found"), std::string::npos) << message;
  EXPECT_NE(message.find("--simulate GPU:MODEL"), std::string::npos) << message;
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

}  // namespace
}  // namespace wattwise::hw
