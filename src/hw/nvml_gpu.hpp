#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "hw/gpu.hpp"
#include "hw/nvml_library.hpp"

namespace wattwise::hw {

// One GPU read and controlled through NVML. A reading that the GPU or driver does not support (the call
// returns NOT_SUPPORTED, or the driver lacks the symbol) is absent, and is remembered so that it is not
// asked for again on every sampling tick. A lost GPU throws GpuLostError (then and on every later call);
// any other unexpected failure an environment error.
class NvmlGpu final : public Gpu {
 public:
  // `process_is_root` decides whether settings are reported as changeable: NVML's device commands need
  // root, and probing by trying a change is not acceptable on a production GPU.
  NvmlGpu(std::shared_ptr<const NvmlLibrary> nvml, unsigned index, nvml_abi::nvmlDevice_t device,
          bool process_is_root);

  const GpuIdentity& identity() const override { return identity_; }
  Capabilities capabilities() override;

  std::optional<std::uint64_t> energy_mj() override;
  std::optional<double> power_instant_w() override;
  std::optional<double> power_average_w() override;
  std::vector<PowerSample> power_samples_since(std::uint64_t since_device_us) override;
  Telemetry telemetry() override;  // PCIe throughput at most once per second (cached in between)
  Telemetry telemetry_without_pcie() override;
  PcieThroughput pcie_throughput() override;  // read now: ~21 ms of wall time per direction
  std::optional<std::vector<GpuProcess>> compute_processes() override;

  std::optional<PowerLimits> power_limits() override;
  std::vector<unsigned> supported_mem_clocks_mhz() override;
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned mem_clock_mhz) override;
  void set_power_limit_w(double watts) override;
  void lock_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) override;
  void reset_sm_clocks() override;
  void lock_mem_clocks_mhz(unsigned min_mhz, unsigned max_mhz) override;
  void reset_mem_clocks() override;

 private:
  // Each reading whose support is remembered separately.
  enum class Reading : std::size_t {
    kEnergy,
    kPowerInstant,
    kPowerAverage,
    kPowerSamples,
    kSmClock,
    kMemClock,
    kUtilization,
    kTemperature,
    kPstate,
    kClocksEventReasons,
    kClocksThrottleReasons,
    kPcieTx,
    kPcieRx,
    kMemoryInfo,
    kLimitConstraints,
    kLimitDefault,
    kLimitCurrent,
    kLimitEnforced,
    kSupportedMemClocks,
    kSupportedSmClocks,
    kComputeProcesses,
    kCount,
  };

  // Calls `function(device, args...)` unless the reading is known to be unsupported. True when it
  // succeeded; false when unsupported (remembered) or momentarily without data.
  template <typename Function, typename... Args>
  bool read(Reading reading, const char* call, Function function, Args... args);
  bool accept_reading(Reading reading, const char* call, nvml_abi::nvmlReturn_t result);
  bool known_unsupported(Reading reading) const;
  void mark_unsupported(Reading reading);

  // Throws unless `result` is success; the message says what to do about a missing permission.
  void check_control(const char* call, nvml_abi::nvmlReturn_t result);
  // Remembers that the GPU is lost and throws GpuLostError; every later call throws it again at once,
  // without asking the driver (a lost GPU stays lost until a reset).
  [[noreturn]] void lost(const char* call, nvml_abi::nvmlReturn_t result);
  void throw_if_lost() const;
  void require_symbol(const void* function, const char* call) const;
  std::vector<unsigned> clock_list(Reading reading, const char* call, unsigned mem_clock_mhz);
  std::optional<unsigned> read_pcie_kbps(Reading reading, nvml_abi::nvmlPcieUtilCounter_t counter);
  Capabilities probe_capabilities();

  static constexpr double kMilliwattsPerWatt = 1000.0;  // NVML gives and takes power in milliwatts

  std::shared_ptr<const NvmlLibrary> nvml_;
  nvml_abi::nvmlDevice_t device_;
  GpuIdentity identity_;
  bool process_is_root_;
  std::array<std::atomic<bool>, static_cast<std::size_t>(Reading::kCount)> unsupported_{};
  std::mutex capabilities_mutex_;
  // NVML measures PCIe throughput over 20 ms per direction and blocks meanwhile: read it at most once per
  // kPcieRefresh and serve the last value in between, so telemetry stays cheap.
  std::mutex pcie_mutex_;
  std::chrono::steady_clock::time_point pcie_read_at_{};
  std::optional<double> pcie_tx_mbps_;
  std::optional<double> pcie_rx_mbps_;
  std::optional<Capabilities> capabilities_;
  std::atomic<bool> lost_{false};
  mutable std::mutex lost_mutex_;
  std::string lost_message_;  // the first GPU_IS_LOST failure, repeated by every later call
};

}  // namespace wattwise::hw
