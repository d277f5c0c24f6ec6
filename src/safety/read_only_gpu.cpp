// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/read_only_gpu.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::safety {
namespace {

// The readings of one GPU, passed through; it has no controls to call.
class ReadOnlyGpu final : public hw::GpuReadings {
 public:
  explicit ReadOnlyGpu(hw::GpuReadings& inner) : inner_(inner) {}

  const hw::GpuIdentity& identity() const override { return inner_.identity(); }
  hw::Capabilities capabilities() override {
    hw::Capabilities caps = inner_.capabilities();
    caps.power_limit_set = caps.sm_clock_lock = caps.mem_clock_lock = false;
    caps.set_permission_note = "--read-only: wattwise changes no GPU setting in this mode";
    return caps;
  }
  std::optional<std::uint64_t> energy_mj() override { return inner_.energy_mj(); }
  std::optional<double> power_instant_w() override { return inner_.power_instant_w(); }
  std::optional<double> power_average_w() override { return inner_.power_average_w(); }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override {
    return inner_.power_samples_since(since_device_us);
  }
  hw::Telemetry telemetry() override { return inner_.telemetry(); }
  hw::Telemetry telemetry_without_pcie() override { return inner_.telemetry_without_pcie(); }
  hw::PcieThroughput pcie_throughput() override { return inner_.pcie_throughput(); }
  std::optional<std::vector<hw::GpuProcess>> compute_processes() override {
    return inner_.compute_processes();
  }
  std::optional<hw::PowerLimits> power_limits() override { return inner_.power_limits(); }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return inner_.supported_mem_clocks_mhz(); }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned mem_clock_mhz) override {
    return inner_.supported_sm_clocks_mhz(mem_clock_mhz);
  }

 private:
  hw::GpuReadings& inner_;
};

}  // namespace

ReadOnlyGpuSystem::ReadOnlyGpuSystem(hw::GpuSystem& inner) : inner_(inner) {
  for (std::size_t i = 0; i < inner.count(); ++i)
    gpus_.push_back(std::make_unique<ReadOnlyGpu>(inner.gpu(i)));
}

ReadOnlyGpuSystem::~ReadOnlyGpuSystem() = default;

hw::GpuReadings& ReadOnlyGpuSystem::gpu(std::size_t index) {
  if (index >= gpus_.size()) {
    throw usage_error(fmt::format("no GPU at position {}: there are {}", index, gpus_.size()));
  }
  return *gpus_[index];
}

}  // namespace wattwise::safety
