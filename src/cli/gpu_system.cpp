#include "cli/gpu_system.hpp"

#include "core/error.hpp"
#include "hw/nvml_system.hpp"

namespace wattwise::cli {

std::unique_ptr<hw::ControllableGpuSystem> open_real_gpus(OfferSimulate offer) {
  try {
    return hw::make_gpu_system();
  } catch (const Error& e) {
    if (offer == OfferSimulate::kNo || e.kind() != ErrorKind::kEnvironment) throw;
    throw Error(e.kind(), std::string(e.what()) + ", or use --simulate GPU:MODEL");
  }
}

}  // namespace wattwise::cli
