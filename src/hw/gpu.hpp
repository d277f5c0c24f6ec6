#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace wattwise::hw {

// A GPU that fell off the bus (NVML_ERROR_GPU_IS_LOST). Every later call to that GPU fails the same way
// until it is reset or the machine rebooted, so callers stop asking it and go on with the other GPUs
// (sampling marks its sources failed; restore skips it and restores the rest). An environment error: exit 3.
// Other driver failures (UNKNOWN, TIMEOUT, ...) stay plain wattwise::Error and may be momentary.
class GpuLostError : public Error {
 public:
  GpuLostError(unsigned gpu_index, const std::string& message)
      : Error(ErrorKind::kEnvironment, message), gpu_index_(gpu_index) {}
  unsigned gpu_index() const { return gpu_index_; }

 private:
  unsigned gpu_index_;
};

struct GpuIdentity {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  std::string pci_bus_id;
};

// Power limits in watts as NVML reports them (it speaks milliwatts; the wrapper converts).
struct PowerLimits {
  double min_w = 0;
  double max_w = 0;
  double default_w = 0;
  double current_w = 0;   // the limit that is set (management limit)
  double enforced_w = 0;  // the limit the GPU actually enforces (may be lower: other caps)
};

// One buffered power sample: the device's own timestamp (microseconds, device clock) and the power.
struct PowerSample {
  std::uint64_t device_time_us = 0;
  double power_w = 0;
};

// Everything that is cheap to read, read together once per sampling tick. A reading the GPU does
// not support is absent (nullopt), never zero.
struct Telemetry {
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<unsigned> util_gpu_pct;
  std::optional<unsigned> util_mem_pct;
  std::optional<unsigned> temp_c;
  std::optional<unsigned> pstate;
  std::optional<std::uint64_t> throttle_reasons;  // NVML clocks-event reasons bit mask
  std::optional<double> pcie_tx_mbps;
  std::optional<double> pcie_rx_mbps;
  std::optional<double> mem_used_mib;
};

// PCIe throughput over NVML's 20 ms window per direction; absent where the GPU or driver cannot tell.
struct PcieThroughput {
  std::optional<double> tx_mbps;
  std::optional<double> rx_mbps;
};

// A process with a compute context on a GPU, as the driver reports it.
struct GpuProcess {
  int pid = 0;  // as the driver sees it (a container's process may show its host pid)
  std::optional<double> used_memory_mib;  // absent when the driver does not say
};

// What this GPU and driver can do; filled by probing each call once.
struct Capabilities {
  bool energy_counter = false;
  bool power_instant = false;
  bool power_average = false;
  bool power_samples = false;
  bool clocks = false;
  bool utilization = false;
  bool temperature = false;
  bool pstate = false;
  bool throttle_reasons = false;
  bool pcie_throughput = false;
  bool memory_used = false;
  bool power_limit_read = false;
  bool power_limit_set = false;  // the call exists and this user may use it
  bool sm_clock_lock = false;
  bool mem_clock_lock = false;
  std::string set_permission_note;  // why settings cannot be changed, for people
};

// What can be read from one GPU: its identity, what it can do, power and energy, telemetry, the processes
// on it and its current settings (limits, supported clocks). Readings return nullopt (or an empty list) when
// unsupported; they throw wattwise::Error (naming the GPU, the call and the driver's message) when they fail,
// GpuLostError when the GPU is lost. Code that only reads (sampling, measure, the exporter) takes this
// interface, so it cannot change a setting by type; a GPU that is only read (a test double) implements just
// this. Implementations: NvmlGpu (real), SimGpu, and the doubles in tests/support.
class GpuReadings {
 public:
  virtual ~GpuReadings() = default;

  virtual const GpuIdentity& identity() const = 0;
  virtual Capabilities capabilities() = 0;

  virtual std::optional<std::uint64_t> energy_mj() = 0;  // total since driver load, monotone
  virtual std::optional<double> power_instant_w() = 0;   // ~100 ms resolution on H100
  virtual std::optional<double> power_average_w() = 0;   // ~1 s moving average
  // Buffered samples newer than `since_device_us` (0: all that are buffered), oldest first.
  virtual std::vector<PowerSample> power_samples_since(std::uint64_t since_device_us) = 0;
  virtual Telemetry telemetry() = 0;
  // Telemetry without PCIe throughput, and PCIe throughput alone. NVML measures PCIe throughput over 20 ms
  // per direction while the call blocks (~21 ms of wall time and ~0.9 ms of CPU each on an H100), so the
  // sampler reads it apart, and only when asked (SamplerConfig::pcie_period). The defaults split telemetry(),
  // which suits GPUs whose PCIe reading is cheap (simulated, fakes); NvmlGpu reads each part on its own.
  virtual Telemetry telemetry_without_pcie() {
    Telemetry t = telemetry();
    t.pcie_tx_mbps.reset();
    t.pcie_rx_mbps.reset();
    return t;
  }
  virtual PcieThroughput pcie_throughput() {
    const Telemetry t = telemetry();
    return {t.pcie_tx_mbps, t.pcie_rx_mbps};
  }
  // The processes running compute work on this GPU now; nullopt when this GPU or driver cannot tell (older
  // driver, no permission, simulated). Polled about once a second beside the sampler (its driver cost is
  // not yet measured: docs/evidence/gpu-usage-poll.md); implementations must allow that from another thread.
  virtual std::optional<std::vector<GpuProcess>> compute_processes() { return std::nullopt; }

  // The settings as they are now (read, never changed here).
  virtual std::optional<PowerLimits> power_limits() = 0;
  virtual std::vector<unsigned> supported_mem_clocks_mhz() = 0;
  virtual std::vector<unsigned> supported_sm_clocks_mhz(unsigned mem_clock_mhz) = 0;

 protected:
  GpuReadings() = default;
  GpuReadings(const GpuReadings&) = default;
  GpuReadings& operator=(const GpuReadings&) = default;
};

// What can be changed on one GPU: the power limit and the clock locks, each with its way back to the
// default. Only safety/ (SettingsGuard, restore, the watchdog) and the code that applies a run's settings
// call these; a change must always be journaled first so that it can be undone (docs/architecture.md,
// hazard zones). Controls throw wattwise::Error when the driver refuses, GpuLostError when the GPU is lost.
class GpuControls {
 public:
  virtual ~GpuControls() = default;

  virtual void set_power_limit_w(double watts) = 0;
  virtual void lock_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) = 0;
  virtual void reset_sm_clocks() = 0;
  virtual void lock_mem_clocks_mhz(unsigned min_mhz, unsigned max_mhz) = 0;
  virtual void reset_mem_clocks() = 0;

 protected:
  GpuControls() = default;
  GpuControls(const GpuControls&) = default;
  GpuControls& operator=(const GpuControls&) = default;
};

// A GPU that is both read and controlled: what the real, simulated and fake GPUs implement. Only a
// ControllableGpuSystem hands one out.
class Gpu : public GpuReadings, public GpuControls {};

// The set of GPUs on this host (or in a simulation), as every command sees them: readings only. Owns the
// GPUs. A read-only system (`--read-only`, `tune --dry-run`: safety::ReadOnlyGpuSystem; the exporter) is just
// this, so a command path that holds only a GpuSystem cannot even name a control: the compiler, not a check
// at run time, keeps it from changing a setting.
class GpuSystem {
 public:
  virtual ~GpuSystem() = default;
  virtual std::string driver_version() = 0;  // "n/a" when unknown
  virtual std::string backend() const = 0;   // "nvml" or "simulated"
  virtual std::size_t count() const = 0;
  virtual GpuReadings& gpu(std::size_t index) = 0;
};

// A GpuSystem whose GPUs may also be set: gpu() gives each GPU's controls beside its readings. Taken only by
// the code that changes settings (safety/: SettingsGuard, GuardedGpus, restore, the watchdog, the local
// settings path; the settings daemon; `info --probe`), never by a read-only command path. Implementations:
// NvmlGpuSystem (real), sim::SimGpuSystem, the fake in tests/support.
class ControllableGpuSystem : public GpuSystem {
 public:
  Gpu& gpu(std::size_t index) override = 0;
};

}  // namespace wattwise::hw
