#pragma once

#include <memory>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::safety {

// `--read-only`, the mode for shared GPU machines (and `tune --dry-run`, the exporter): a view of the GPUs
// that has no controls at all. It is an hw::GpuSystem, not an hw::ControllableGpuSystem, so nothing that
// changes a setting (safety::SettingsGuard, GuardedGpus, restore, LocalSettingsAccess, the daemon) can be
// given it: that is a compile error, not a refusal at run time. Readings pass through; the capabilities say
// that nothing may be set, with the reason.
class ReadOnlyGpuSystem final : public hw::GpuSystem {
 public:
  explicit ReadOnlyGpuSystem(hw::GpuSystem& inner);
  ~ReadOnlyGpuSystem() override;

  std::string driver_version() override { return inner_.driver_version(); }
  std::string backend() const override { return inner_.backend(); }
  std::size_t count() const override { return gpus_.size(); }
  hw::GpuReadings& gpu(std::size_t index) override;

 private:
  hw::GpuSystem& inner_;
  std::vector<std::unique_ptr<hw::GpuReadings>> gpus_;
};

}  // namespace wattwise::safety
