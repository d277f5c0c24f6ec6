#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/temp_dir.hpp"
#include "hw/nvml_library.hpp"
#include "hw/nvml_system.hpp"

namespace wattwise::hw::testing {

// A fresh fake NVML world per test: its own config and state file in a temporary directory, named to the
// fake driver through WATTWISE_FAKE_NVML_CONFIG.
class FakeNvmlEnv {
 public:
  explicit FakeNvmlEnv(const nlohmann::json& config) {
    config_path_ = (dir_ / "fake_nvml.json").string();
    std::ofstream(config_path_) << config.dump(2);
    setenv("WATTWISE_FAKE_NVML_CONFIG", config_path_.c_str(), 1);
  }
  ~FakeNvmlEnv() { unsetenv("WATTWISE_FAKE_NVML_CONFIG"); }
  FakeNvmlEnv(const FakeNvmlEnv&) = delete;
  FakeNvmlEnv& operator=(const FakeNvmlEnv&) = delete;

  const std::string& config_path() const { return config_path_; }

  static std::shared_ptr<const NvmlLibrary> load(const std::string& library = FAKE_NVML_PATH) {
    return std::make_shared<const NvmlLibrary>(library);
  }
  static std::unique_ptr<NvmlGpuSystem> system(bool root = true,
                                               const std::string& library = FAKE_NVML_PATH) {
    return std::make_unique<NvmlGpuSystem>(load(library), root);
  }

 private:
  wattwise::testing::TempDir dir_{"wattwise-hw"};
  std::string config_path_;
};

// Two GPUs: GPU 0 draws a constant 300 W; GPU 1 alternates 100 W and 500 W every 0.5 s.
inline nlohmann::json two_gpu_config() {
  return {
      {"driver_version", "580.159.04"},
      {"gpus",
       {{{"name", "NVIDIA H100 80GB HBM3"},
         {"uuid", "GPU-aaaa"},
         {"pci_bus_id", "00000000:19:00.0"},
         {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 700}}},
         {"mem_clocks_mhz", {2619, 1593}},
         {"sm_clocks_mhz", {1980, 1500, 1200, 345}},
         {"profile", {{{"duration_s", 1.0}, {"watts", 300}}}}},
        {{"name", "NVIDIA H100 80GB HBM3"},
         {"uuid", "GPU-bbbb"},
         {"pci_bus_id", "00000000:3B:00.0"},
         {"power_limit_w", {{"min", 200}, {"max", 700}, {"default", 700}, {"initial", 600}}},
         {"profile", {{{"duration_s", 0.5}, {"watts", 100}}, {{"duration_s", 0.5}, {"watts", 500}}}}}}},
  };
}

}  // namespace wattwise::hw::testing
