#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"

namespace wattwise::report {

// `wattwise info`: GPUs, limits, clocks, capabilities and permissions, for people and for programs.
// Reads only: nothing is changed on any GPU.
std::string info_text(hw::GpuSystem& system);
nlohmann::json info_json(hw::GpuSystem& system);

}  // namespace wattwise::report
