#pragma once

#include <memory>
#include <string>

#include "hw/gpu.hpp"

namespace wattwise::cli {

// Whether the command has a --simulate flag to offer when there is no driver (measure, sweep, tune and
// info have; exporter, counter and restore have not, and must not suggest it).
enum class OfferSimulate { kNo, kYes };

// The real GPUs through NVML. Without a driver the error says what to install or load, and, for a command
// that has it, "or use --simulate GPU:MODEL".
std::unique_ptr<hw::ControllableGpuSystem> open_real_gpus(OfferSimulate offer = OfferSimulate::kNo);

}  // namespace wattwise::cli
