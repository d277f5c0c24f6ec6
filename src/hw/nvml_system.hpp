#pragma once

#include <memory>
#include <vector>

#include "hw/gpu.hpp"
#include "hw/nvml_gpu.hpp"
#include "hw/nvml_library.hpp"

namespace wattwise::hw {

// All GPUs that NVML sees on this host, in NVML's index order. A GPU whose handle or identity cannot be read
// (lost) keeps its position as a GPU without UUID whose every call throws environment_error with the
// reason; unavailable() lists them.
class NvmlGpuSystem final : public ControllableGpuSystem {
 public:
  // Production wiring: the library named by NvmlLibrary::default_path(), root decided by geteuid().
  NvmlGpuSystem();
  // For tests: a given library, and whether to report settings as changeable by this process.
  NvmlGpuSystem(std::shared_ptr<const NvmlLibrary> nvml, bool process_is_root);

  std::string driver_version() override;
  std::string backend() const override { return "nvml"; }
  std::size_t count() const override { return gpus_.size(); }
  Gpu& gpu(std::size_t index) override;

  struct Unavailable {
    unsigned index = 0;
    std::string reason;
  };
  const std::vector<Unavailable>& unavailable() const { return unavailable_; }

 private:
  void add_unavailable(unsigned index, std::string reason);

  std::shared_ptr<const NvmlLibrary> nvml_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::vector<Unavailable> unavailable_;
};

// The real NVML path; throws environment_error (with what to do) when there is no usable driver.
std::unique_ptr<ControllableGpuSystem> make_gpu_system();

}  // namespace wattwise::hw
