#pragma once

#include <memory>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::safety {

// `--read-only`, the mode for shared GPU machines: a view of the GPUs in which every control call throws,
// so no code path (a bug included) can change a setting. Readings pass through; the capabilities say that
// nothing may be set, with the reason.
class ReadOnlyGpuSystem final : public hw::GpuSystem {
 public:
  explicit ReadOnlyGpuSystem(hw::GpuSystem& inner);
  ~ReadOnlyGpuSystem() override;

  std::string driver_version() override { return inner_.driver_version(); }
  std::string backend() const override { return inner_.backend(); }
  std::size_t count() const override { return gpus_.size(); }
  hw::Gpu& gpu(std::size_t index) override;

 private:
  hw::GpuSystem& inner_;
  std::vector<std::unique_ptr<hw::Gpu>> gpus_;
};

}  // namespace wattwise::safety
