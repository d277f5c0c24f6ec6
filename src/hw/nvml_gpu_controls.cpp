// NvmlGpu's controls (power limit, locked clocks) and what the process may change (capabilities): the calls
// that change a GPU, with the errors that say what to do. Its readings are in nvml_gpu.cpp.
#include "hw/nvml_gpu.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "hw/permission.hpp"

namespace wattwise::hw {

using namespace nvml_abi;

void NvmlGpu::require_symbol(const void* function, const char* call) const {
  throw_if_lost();
  if (function == nullptr) {
    throw environment_error(
        fmt::format("GPU {}: this NVIDIA driver has no {}: update the driver to change this setting",
                    identity_.index, call));
  }
}

void NvmlGpu::check_control(const char* call, nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return;
    case NVML_ERROR_NO_PERMISSION:
      throw environment_error(nvml_->describe_failure(identity_.index, call, result) + ": " +
                              permission_advice(process_is_root_));
    case NVML_ERROR_NOT_SUPPORTED:
      throw environment_error(nvml_->describe_failure(identity_.index, call, result) +
                              ": this GPU does not allow this setting; leave it out of the sweep");
    case NVML_ERROR_INVALID_ARGUMENT:
      throw usage_error(nvml_->describe_failure(identity_.index, call, result) +
                        ": the value is out of this GPU's range, see `wattwise info`");
    case NVML_ERROR_GPU_IS_LOST:
      lost(call, result);
    default:
      throw environment_error(nvml_->describe_failure(identity_.index, call, result) +
                              ": check the GPU with `nvidia-smi`");
  }
}

void NvmlGpu::set_power_limit_w(double watts) {
  const char* call = "nvmlDeviceSetPowerManagementLimit";
  require_symbol(reinterpret_cast<const void*>(nvml_->nvmlDeviceSetPowerManagementLimit), call);
  if (const auto limits = power_limits(); limits && (watts < limits->min_w || watts > limits->max_w)) {
    throw usage_error(fmt::format("GPU {}: power limit {:g} W is outside the allowed range {:g}..{:g} W",
                                  identity_.index, watts, limits->min_w, limits->max_w));
  }
  if (!(watts > 0))
    throw usage_error(fmt::format("GPU {}: power limit {:g} W must be positive", identity_.index, watts));
  const auto limit_mw = static_cast<unsigned int>(std::lround(watts * kMilliwattsPerWatt));
  check_control(call, nvml_->nvmlDeviceSetPowerManagementLimit(device_, limit_mw));
}

void NvmlGpu::lock_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) {
  const char* call = "nvmlDeviceSetGpuLockedClocks";
  require_symbol(reinterpret_cast<const void*>(nvml_->nvmlDeviceSetGpuLockedClocks), call);
  if (min_mhz > max_mhz) {
    throw usage_error(
        fmt::format("GPU {}: SM clock range {}..{} MHz is reversed", identity_.index, min_mhz, max_mhz));
  }
  check_control(call, nvml_->nvmlDeviceSetGpuLockedClocks(device_, min_mhz, max_mhz));
}

void NvmlGpu::reset_sm_clocks() {
  const char* call = "nvmlDeviceResetGpuLockedClocks";
  require_symbol(reinterpret_cast<const void*>(nvml_->nvmlDeviceResetGpuLockedClocks), call);
  check_control(call, nvml_->nvmlDeviceResetGpuLockedClocks(device_));
}

void NvmlGpu::lock_mem_clocks_mhz(unsigned min_mhz, unsigned max_mhz) {
  const char* call = "nvmlDeviceSetMemoryLockedClocks";
  require_symbol(reinterpret_cast<const void*>(nvml_->nvmlDeviceSetMemoryLockedClocks), call);
  if (min_mhz > max_mhz) {
    throw usage_error(
        fmt::format("GPU {}: memory clock range {}..{} MHz is reversed", identity_.index, min_mhz, max_mhz));
  }
  check_control(call, nvml_->nvmlDeviceSetMemoryLockedClocks(device_, min_mhz, max_mhz));
}

void NvmlGpu::reset_mem_clocks() {
  const char* call = "nvmlDeviceResetMemoryLockedClocks";
  require_symbol(reinterpret_cast<const void*>(nvml_->nvmlDeviceResetMemoryLockedClocks), call);
  check_control(call, nvml_->nvmlDeviceResetMemoryLockedClocks(device_));
}

Capabilities NvmlGpu::capabilities() {
  std::lock_guard lock(capabilities_mutex_);
  if (!capabilities_) capabilities_ = probe_capabilities();
  return *capabilities_;
}

Capabilities NvmlGpu::probe_capabilities() {
  // Readings are harmless, so each is tried once; settings are never changed to find out.
  Capabilities caps;
  caps.energy_counter = energy_mj().has_value();
  caps.power_instant = power_instant_w().has_value();
  caps.power_average = power_average_w().has_value();
  power_samples_since(0);
  caps.power_samples = !known_unsupported(Reading::kPowerSamples);
  const Telemetry t = telemetry();
  caps.clocks = t.sm_clock_mhz.has_value() || t.mem_clock_mhz.has_value();
  caps.utilization = t.util_gpu_pct.has_value();
  caps.temperature = t.temp_c.has_value();
  caps.pstate = t.pstate.has_value();
  caps.throttle_reasons = t.throttle_reasons.has_value();
  caps.pcie_throughput = t.pcie_tx_mbps.has_value() || t.pcie_rx_mbps.has_value();
  caps.memory_used = t.mem_used_mib.has_value();
  caps.power_limit_read = power_limits().has_value();

  const bool has_set_limit = nvml_->nvmlDeviceSetPowerManagementLimit != nullptr;
  const bool has_sm_lock = nvml_->nvmlDeviceSetGpuLockedClocks != nullptr;
  const bool has_mem_lock = nvml_->nvmlDeviceSetMemoryLockedClocks != nullptr;
  caps.power_limit_set = has_set_limit && caps.power_limit_read && process_is_root_;
  caps.sm_clock_lock = has_sm_lock && process_is_root_;
  caps.mem_clock_lock = has_mem_lock && process_is_root_;
  if (!process_is_root_) {
    caps.set_permission_note = std::string("not root: ") + permission_advice(false);
  } else if (!has_set_limit || !has_sm_lock || !has_mem_lock) {
    caps.set_permission_note =
        "this NVIDIA driver lacks some setting calls (power limit or locked clocks): update it";
  }
  return caps;
}

}  // namespace wattwise::hw
