#include "hw/nvml_system.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace wattwise::hw {

using namespace nvml_abi;

NvmlGpuSystem::NvmlGpuSystem()
    : NvmlGpuSystem(std::make_shared<const NvmlLibrary>(NvmlLibrary::default_path()), geteuid() == 0) {}

NvmlGpuSystem::NvmlGpuSystem(std::shared_ptr<const NvmlLibrary> nvml, bool process_is_root)
    : nvml_(std::move(nvml)) {
  if (nvml_->nvmlDeviceGetCount_v2 == nullptr || nvml_->nvmlDeviceGetHandleByIndex_v2 == nullptr) {
    throw environment_error(
        "this NVIDIA driver lacks nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2: update it");
  }
  unsigned int gpu_count = 0;
  if (const nvmlReturn_t result = nvml_->nvmlDeviceGetCount_v2(&gpu_count); result != NVML_SUCCESS) {
    throw environment_error(fmt::format(
        "nvmlDeviceGetCount_v2 failed: {}: check the driver with `nvidia-smi`", nvml_->error_string(result)));
  }
  for (unsigned index = 0; index < gpu_count; ++index) {
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t result = nvml_->nvmlDeviceGetHandleByIndex_v2(index, &device);
        result != NVML_SUCCESS) {
      throw environment_error(
          nvml_->describe_failure(index, "nvmlDeviceGetHandleByIndex_v2", result) +
          ": check the GPU with `nvidia-smi`, or hide it with CUDA_VISIBLE_DEVICES/--gpus");
    }
    gpus_.push_back(std::make_unique<NvmlGpu>(nvml_, index, device, process_is_root));
  }
}

std::string NvmlGpuSystem::driver_version() {
  if (nvml_->nvmlSystemGetDriverVersion == nullptr) return "n/a";
  char version[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (nvml_->nvmlSystemGetDriverVersion(version, sizeof(version)) != NVML_SUCCESS) return "n/a";
  return valid_utf8(std::string_view(version, strnlen(version, sizeof(version))));
}

Gpu& NvmlGpuSystem::gpu(std::size_t index) {
  if (index >= gpus_.size()) {
    throw usage_error(fmt::format("there is no GPU {}: this host has {} (indices 0..{})", index, gpus_.size(),
                                  gpus_.empty() ? 0 : gpus_.size() - 1));
  }
  return *gpus_[index];
}

std::unique_ptr<GpuSystem> make_gpu_system() {
  return std::make_unique<NvmlGpuSystem>();
}

}  // namespace wattwise::hw
