// NvmlGpu's readings: energy, power, telemetry, processes, limits and clock lists, each remembered as
// unsupported once the driver says so. Its controls are in nvml_gpu_controls.cpp.
#include "hw/nvml_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "core/text.hpp"

namespace wattwise::hw {

using namespace nvml_abi;

namespace {

constexpr double kBytesPerMib = 1024.0 * 1024.0;
// Room for this many processes in the first call of the process list; it doubles when the driver asks.
constexpr std::size_t kFirstProcessListSize = 64;
constexpr int kProcessListAttempts = 4;
// NVML reports PCIe throughput in KB/s; we report MB/s with the same (decimal) prefix step.
constexpr double kKilobytesPerMegabyte = 1000.0;

// Reads an nvmlValue_t according to its type tag; nullopt for a tag we do not know.
std::optional<double> value_as_double(nvmlValueType_t type, const nvmlValue_t& value) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
      return value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return static_cast<double>(value.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return static_cast<double>(value.siVal);
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return static_cast<double>(value.usVal);
  }
  return std::nullopt;
}

constexpr const char* kLostAdvice =
    ": the GPU fell off the bus; check `nvidia-smi` and the kernel log (Xid), a GPU reset or reboot is "
    "needed";

std::string read_string(const NvmlLibrary& nvml, unsigned index, const char* call,
                        nvmlReturn_t (*function)(nvmlDevice_t, char*, unsigned int), nvmlDevice_t device,
                        unsigned int size) {
  if (function == nullptr) return "n/a";
  std::string buffer(size, '\0');
  const nvmlReturn_t result = function(device, buffer.data(), size);
  if (result == NVML_ERROR_NOT_SUPPORTED) return "n/a";
  if (result == NVML_ERROR_GPU_IS_LOST)
    throw GpuLostError(index, nvml.describe_failure(index, call, result) + kLostAdvice);
  if (result != NVML_SUCCESS) {
    throw environment_error(nvml.describe_failure(index, call, result) + ": check the GPU with `nvidia-smi`");
  }
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return valid_utf8(buffer);  // a driver's bytes are not promised to be UTF-8; JSON and reports need it
}

}  // namespace

NvmlGpu::NvmlGpu(std::shared_ptr<const NvmlLibrary> nvml, unsigned index, nvmlDevice_t device,
                 bool process_is_root)
    : nvml_(std::move(nvml)), device_(device), process_is_root_(process_is_root) {
  identity_.index = index;
  identity_.name = read_string(*nvml_, index, "nvmlDeviceGetName", nvml_->nvmlDeviceGetName, device_,
                               NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  identity_.uuid = read_string(*nvml_, index, "nvmlDeviceGetUUID", nvml_->nvmlDeviceGetUUID, device_,
                               NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  identity_.pci_bus_id = "n/a";
  if (nvml_->nvmlDeviceGetPciInfo_v3 != nullptr) {
    nvmlPciInfo_t pci{};
    if (nvml_->nvmlDeviceGetPciInfo_v3(device_, &pci) == NVML_SUCCESS) {
      identity_.pci_bus_id = valid_utf8(std::string_view(pci.busId, strnlen(pci.busId, sizeof(pci.busId))));
    }
  }
}

void NvmlGpu::lost(const char* call, nvmlReturn_t result) {
  std::string message = nvml_->describe_failure(identity_.index, call, result) + kLostAdvice;
  {
    std::lock_guard lock(lost_mutex_);
    if (lost_message_.empty()) lost_message_ = message;
  }
  lost_.store(true, std::memory_order_release);
  throw GpuLostError(identity_.index, message);
}

void NvmlGpu::throw_if_lost() const {
  if (!lost_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(lost_mutex_);
  throw GpuLostError(identity_.index, lost_message_);
}

bool NvmlGpu::known_unsupported(Reading reading) const {
  return unsupported_[static_cast<std::size_t>(reading)].load(std::memory_order_relaxed);
}

void NvmlGpu::mark_unsupported(Reading reading) {
  unsupported_[static_cast<std::size_t>(reading)].store(true, std::memory_order_relaxed);
}

template <typename Function, typename... Args>
bool NvmlGpu::read(Reading reading, const char* call, Function function, Args... args) {
  if (function == nullptr) {
    mark_unsupported(reading);
    return false;
  }
  if (known_unsupported(reading)) return false;
  throw_if_lost();
  return accept_reading(reading, call, function(device_, args...));
}

bool NvmlGpu::accept_reading(Reading reading, const char* call, nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return true;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
    case NVML_ERROR_NO_PERMISSION:  // some readings are root-only; for us that is the same as absent
      mark_unsupported(reading);
      return false;
    case NVML_ERROR_NO_DATA:
    case NVML_ERROR_NOT_READY:
    case NVML_ERROR_NOT_FOUND:  // e.g. SM clocks asked for a memory clock the GPU does not have
      return false;             // nothing to report now; the call itself is supported
    case NVML_ERROR_GPU_IS_LOST:
      lost(call, result);
    default:
      throw environment_error(nvml_->describe_failure(identity_.index, call, result) +
                              ": check the GPU with `nvidia-smi`");
  }
}

std::optional<std::uint64_t> NvmlGpu::energy_mj() {
  unsigned long long energy_mj = 0;
  if (!read(Reading::kEnergy, "nvmlDeviceGetTotalEnergyConsumption",
            nvml_->nvmlDeviceGetTotalEnergyConsumption, &energy_mj)) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(energy_mj);
}

std::optional<double> NvmlGpu::power_instant_w() {
  nvmlFieldValue_t field{};
  field.fieldId = NVML_FI_DEV_POWER_INSTANT;
  if (!read(Reading::kPowerInstant, "nvmlDeviceGetFieldValues", nvml_->nvmlDeviceGetFieldValues, 1, &field)) {
    return std::nullopt;
  }
  // The call succeeds as a whole while the field itself may be unsupported (older GPUs and drivers).
  if (!accept_reading(Reading::kPowerInstant, "nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)",
                      field.nvmlReturn)) {
    return std::nullopt;
  }
  const std::optional<double> power_mw = value_as_double(field.valueType, field.value);
  if (!power_mw) return std::nullopt;
  return *power_mw / kMilliwattsPerWatt;
}

std::optional<double> NvmlGpu::power_average_w() {
  unsigned int power_mw = 0;
  if (!read(Reading::kPowerAverage, "nvmlDeviceGetPowerUsage", nvml_->nvmlDeviceGetPowerUsage, &power_mw)) {
    return std::nullopt;
  }
  return power_mw / kMilliwattsPerWatt;
}

std::vector<PowerSample> NvmlGpu::power_samples_since(std::uint64_t since_device_us) {
  const char* call = "nvmlDeviceGetSamples(NVML_TOTAL_POWER_SAMPLES)";
  auto* get_samples = nvml_->nvmlDeviceGetSamples;
  nvmlValueType_t value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
  unsigned int count = 0;
  // First ask how many samples there are (null buffer), then fetch them. NOT_FOUND means "nothing newer
  // than since_device_us", which is normal when drained often.
  const auto fetch = [&](nvmlSample_t* buffer) -> bool {
    if (get_samples == nullptr || known_unsupported(Reading::kPowerSamples)) {
      mark_unsupported(Reading::kPowerSamples);
      return false;
    }
    throw_if_lost();
    const nvmlReturn_t result =
        get_samples(device_, NVML_TOTAL_POWER_SAMPLES, static_cast<unsigned long long>(since_device_us),
                    &value_type, &count, buffer);
    if (result == NVML_ERROR_NOT_FOUND) return false;
    return accept_reading(Reading::kPowerSamples, call, result);
  };
  if (!fetch(nullptr) || count == 0) return {};
  std::vector<nvmlSample_t> raw(count);
  if (!fetch(raw.data())) return {};
  raw.resize(std::min<std::size_t>(count, raw.size()));

  std::vector<PowerSample> samples;
  samples.reserve(raw.size());
  for (const nvmlSample_t& sample : raw) {
    if (sample.timeStamp <= since_device_us) continue;
    const std::optional<double> power_mw = value_as_double(value_type, sample.sampleValue);
    if (!power_mw) continue;
    samples.push_back({static_cast<std::uint64_t>(sample.timeStamp), *power_mw / kMilliwattsPerWatt});
  }
  std::sort(samples.begin(), samples.end(),
            [](const PowerSample& a, const PowerSample& b) { return a.device_time_us < b.device_time_us; });
  return samples;
}

std::optional<unsigned> NvmlGpu::read_pcie_kbps(Reading reading, nvmlPcieUtilCounter_t counter) {
  unsigned int kbps = 0;
  if (!read(reading, "nvmlDeviceGetPcieThroughput", nvml_->nvmlDeviceGetPcieThroughput, counter, &kbps)) {
    return std::nullopt;
  }
  return kbps;
}

std::optional<std::vector<GpuProcess>> NvmlGpu::compute_processes() {
  const char* call = "nvmlDeviceGetComputeRunningProcesses_v3";
  auto* list = nvml_->nvmlDeviceGetComputeRunningProcesses_v3;
  if (list == nullptr) mark_unsupported(Reading::kComputeProcesses);
  if (known_unsupported(Reading::kComputeProcesses)) return std::nullopt;
  throw_if_lost();
  // The list can grow between the call that sizes it and the call that fills it: retry a few times.
  std::vector<nvmlProcessInfo_t> infos(kFirstProcessListSize);
  for (int attempt = 0; attempt < kProcessListAttempts; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    const nvmlReturn_t result = list(device_, &count, infos.data());
    if (result == NVML_ERROR_INSUFFICIENT_SIZE) {
      infos.resize(std::max<std::size_t>(count, infos.size()) * 2);
      continue;
    }
    if (!accept_reading(Reading::kComputeProcesses, call, result)) return std::nullopt;
    std::vector<GpuProcess> processes;
    for (unsigned int i = 0; i < std::min<std::size_t>(count, infos.size()); ++i) {
      GpuProcess p;
      p.pid = static_cast<int>(infos[i].pid);
      if (infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE)
        p.used_memory_mib = static_cast<double>(infos[i].usedGpuMemory) / kBytesPerMib;
      processes.push_back(p);
    }
    return processes;
  }
  return std::nullopt;  // still growing after every attempt: nothing to report this time
}

PcieThroughput NvmlGpu::pcie_throughput() {
  PcieThroughput pcie;
  if (auto kbps = read_pcie_kbps(Reading::kPcieTx, NVML_PCIE_UTIL_TX_BYTES))
    pcie.tx_mbps = *kbps / kKilobytesPerMegabyte;
  if (auto kbps = read_pcie_kbps(Reading::kPcieRx, NVML_PCIE_UTIL_RX_BYTES))
    pcie.rx_mbps = *kbps / kKilobytesPerMegabyte;
  return pcie;
}

Telemetry NvmlGpu::telemetry() {
  Telemetry t = telemetry_without_pcie();
  {
    constexpr auto kPcieRefresh = std::chrono::seconds(1);
    std::lock_guard lock(pcie_mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (pcie_read_at_ == std::chrono::steady_clock::time_point{} || now - pcie_read_at_ >= kPcieRefresh) {
      pcie_read_at_ = now;
      const PcieThroughput pcie = pcie_throughput();
      pcie_tx_mbps_ = pcie.tx_mbps;
      pcie_rx_mbps_ = pcie.rx_mbps;
    }
    t.pcie_tx_mbps = pcie_tx_mbps_;
    t.pcie_rx_mbps = pcie_rx_mbps_;
  }
  return t;
}

Telemetry NvmlGpu::telemetry_without_pcie() {
  Telemetry t;
  unsigned int value = 0;
  if (read(Reading::kSmClock, "nvmlDeviceGetClockInfo(SM)", nvml_->nvmlDeviceGetClockInfo, NVML_CLOCK_SM,
           &value)) {
    t.sm_clock_mhz = value;
  }
  if (read(Reading::kMemClock, "nvmlDeviceGetClockInfo(MEM)", nvml_->nvmlDeviceGetClockInfo, NVML_CLOCK_MEM,
           &value)) {
    t.mem_clock_mhz = value;
  }
  nvmlUtilization_t utilization{};
  if (read(Reading::kUtilization, "nvmlDeviceGetUtilizationRates", nvml_->nvmlDeviceGetUtilizationRates,
           &utilization)) {
    t.util_gpu_pct = utilization.gpu;
    t.util_mem_pct = utilization.memory;
  }
  if (read(Reading::kTemperature, "nvmlDeviceGetTemperature", nvml_->nvmlDeviceGetTemperature,
           NVML_TEMPERATURE_GPU, &value)) {
    t.temp_c = value;
  }
  nvmlPstates_t pstate = NVML_PSTATE_UNKNOWN;
  if (read(Reading::kPstate, "nvmlDeviceGetPerformanceState", nvml_->nvmlDeviceGetPerformanceState,
           &pstate) &&
      pstate != NVML_PSTATE_UNKNOWN) {
    t.pstate = static_cast<unsigned>(pstate);
  }
  // Drivers since 535 call them "clocks event reasons"; older ones only have the "throttle" name.
  unsigned long long reasons = 0;
  if (read(Reading::kClocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons",
           nvml_->nvmlDeviceGetCurrentClocksEventReasons, &reasons) ||
      read(Reading::kClocksThrottleReasons, "nvmlDeviceGetCurrentClocksThrottleReasons",
           nvml_->nvmlDeviceGetCurrentClocksThrottleReasons, &reasons)) {
    t.throttle_reasons = reasons;
  }
  nvmlMemory_t memory{};
  if (read(Reading::kMemoryInfo, "nvmlDeviceGetMemoryInfo", nvml_->nvmlDeviceGetMemoryInfo, &memory)) {
    t.mem_used_mib = static_cast<double>(memory.used) / kBytesPerMib;
  }
  return t;
}

std::optional<PowerLimits> NvmlGpu::power_limits() {
  unsigned int min_mw = 0, max_mw = 0, default_mw = 0, current_mw = 0, enforced_mw = 0;
  if (!read(Reading::kLimitCurrent, "nvmlDeviceGetPowerManagementLimit",
            nvml_->nvmlDeviceGetPowerManagementLimit, &current_mw)) {
    return std::nullopt;
  }
  PowerLimits limits;
  limits.current_w = current_mw / kMilliwattsPerWatt;
  // Without constraints the only limit we know to be valid is the current one.
  limits.min_w = limits.max_w = limits.current_w;
  if (read(Reading::kLimitConstraints, "nvmlDeviceGetPowerManagementLimitConstraints",
           nvml_->nvmlDeviceGetPowerManagementLimitConstraints, &min_mw, &max_mw)) {
    limits.min_w = min_mw / kMilliwattsPerWatt;
    limits.max_w = max_mw / kMilliwattsPerWatt;
  }
  limits.default_w = limits.max_w;
  if (read(Reading::kLimitDefault, "nvmlDeviceGetPowerManagementDefaultLimit",
           nvml_->nvmlDeviceGetPowerManagementDefaultLimit, &default_mw)) {
    limits.default_w = default_mw / kMilliwattsPerWatt;
  }
  limits.enforced_w = limits.current_w;
  if (read(Reading::kLimitEnforced, "nvmlDeviceGetEnforcedPowerLimit", nvml_->nvmlDeviceGetEnforcedPowerLimit,
           &enforced_mw)) {
    limits.enforced_w = enforced_mw / kMilliwattsPerWatt;
  }
  return limits;
}

std::vector<unsigned> NvmlGpu::clock_list(Reading reading, const char* call, unsigned mem_clock_mhz) {
  // Ask with a generous buffer; on INSUFFICIENT_SIZE NVML tells the count it needs.
  std::vector<unsigned int> clocks(512);
  for (int attempt = 0; attempt < 2; ++attempt) {
    unsigned int count = static_cast<unsigned int>(clocks.size());
    nvmlReturn_t result = NVML_ERROR_FUNCTION_NOT_FOUND;
    if (known_unsupported(reading)) return {};
    throw_if_lost();
    if (reading == Reading::kSupportedMemClocks && nvml_->nvmlDeviceGetSupportedMemoryClocks != nullptr) {
      result = nvml_->nvmlDeviceGetSupportedMemoryClocks(device_, &count, clocks.data());
    } else if (reading == Reading::kSupportedSmClocks &&
               nvml_->nvmlDeviceGetSupportedGraphicsClocks != nullptr) {
      result = nvml_->nvmlDeviceGetSupportedGraphicsClocks(device_, mem_clock_mhz, &count, clocks.data());
    }
    if (result == NVML_ERROR_INSUFFICIENT_SIZE && attempt == 0) {
      clocks.resize(count);
      continue;
    }
    if (!accept_reading(reading, call, result)) return {};
    clocks.resize(std::min<std::size_t>(count, clocks.size()));
    return {clocks.begin(), clocks.end()};
  }
  return {};
}

std::vector<unsigned> NvmlGpu::supported_mem_clocks_mhz() {
  return clock_list(Reading::kSupportedMemClocks, "nvmlDeviceGetSupportedMemoryClocks", 0);
}

std::vector<unsigned> NvmlGpu::supported_sm_clocks_mhz(unsigned mem_clock_mhz) {
  return clock_list(Reading::kSupportedSmClocks, "nvmlDeviceGetSupportedGraphicsClocks", mem_clock_mhz);
}

}  // namespace wattwise::hw
