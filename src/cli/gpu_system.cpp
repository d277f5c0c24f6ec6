#include "cli/gpu_system.hpp"

#include "core/error.hpp"
#include "hw/nvml_system.hpp"

namespace wattwise::cli {

std::unique_ptr<hw::GpuSystem> open_real_gpus() {
  return hw::make_gpu_system();
}

}  // namespace wattwise::cli
