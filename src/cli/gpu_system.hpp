#pragma once

#include <memory>
#include <string>

#include "hw/gpu.hpp"

namespace wattwise::cli {

// The real GPUs through NVML. Without a driver the error says to install one or to use --simulate.
std::unique_ptr<hw::GpuSystem> open_real_gpus();

}  // namespace wattwise::cli
