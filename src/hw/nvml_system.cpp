#include "hw/nvml_system.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/text.hpp"

namespace wattwise::hw {

using namespace nvml_abi;

namespace {

// A GPU that NVML lists but whose handle or identity cannot be read (lost: fallen off the bus, or failing).
// It keeps its index, so the positions of the other GPUs do not shift; it has no UUID, so nothing that
// finds GPUs by UUID (restore) can take it for another. Every reading and control says why it failed.
class UnavailableGpu final : public Gpu {
 public:
  UnavailableGpu(unsigned index, std::string reason) : reason_(std::move(reason)) {
    identity_.index = index;
    identity_.name = "unavailable";
    identity_.pci_bus_id = "n/a";
  }

  const GpuIdentity& identity() const override { return identity_; }
  Capabilities capabilities() override {
    Capabilities caps;
    caps.set_permission_note = reason_;
    return caps;
  }
  std::optional<std::uint64_t> energy_mj() override { fail(); }
  std::optional<double> power_instant_w() override { fail(); }
  std::optional<double> power_average_w() override { fail(); }
  std::vector<PowerSample> power_samples_since(std::uint64_t) override { fail(); }
  Telemetry telemetry() override { fail(); }
  std::optional<PowerLimits> power_limits() override { fail(); }
  std::vector<unsigned> supported_mem_clocks_mhz() override { fail(); }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { fail(); }
  void set_power_limit_w(double) override { fail(); }
  void lock_sm_clocks_mhz(unsigned, unsigned) override { fail(); }
  void reset_sm_clocks() override { fail(); }
  void lock_mem_clocks_mhz(unsigned, unsigned) override { fail(); }
  void reset_mem_clocks() override { fail(); }

 private:
  [[noreturn]] void fail() const { throw environment_error(reason_); }
  GpuIdentity identity_;
  std::string reason_;
};

}  // namespace

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
  // One GPU that cannot be read (lost, failing) must not hide the others: restoring the healthy GPUs after
  // a GPU fell off the bus is exactly when this runs. It stays in its place as an UnavailableGpu.
  for (unsigned index = 0; index < gpu_count; ++index) {
    nvmlDevice_t device = nullptr;
    if (const nvmlReturn_t result = nvml_->nvmlDeviceGetHandleByIndex_v2(index, &device);
        result != NVML_SUCCESS) {
      add_unavailable(index, nvml_->describe_failure(index, "nvmlDeviceGetHandleByIndex_v2", result) +
                                 ": check the GPU with `nvidia-smi` and the kernel log (Xid)");
      continue;
    }
    try {
      gpus_.push_back(std::make_unique<NvmlGpu>(nvml_, index, device, process_is_root));
    } catch (const Error& e) {
      add_unavailable(index, e.what());
    }
  }
}

void NvmlGpuSystem::add_unavailable(unsigned index, std::string reason) {
  unavailable_.push_back({index, reason});
  gpus_.push_back(std::make_unique<UnavailableGpu>(index, std::move(reason)));
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

std::unique_ptr<ControllableGpuSystem> make_gpu_system() {
  return std::make_unique<NvmlGpuSystem>();
}

}  // namespace wattwise::hw
