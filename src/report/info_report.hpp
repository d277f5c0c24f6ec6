#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"

namespace wattwise::report {

// What the driver answered when asked to set a GPU's power limit to the value it already has
// (`wattwise info --probe`, the same question a sweep asks before its first change).
struct SetProbe {
  std::optional<bool> allowed;  // nullopt: could not ask (another wattwise holds the GPU)
  std::string note;             // the driver's refusal, or why it could not be asked
};

// `wattwise info`: GPUs, limits, clocks, capabilities and permissions, for people and for programs.
// Reads only: nothing is changed on any GPU. Whether settings may change is "no" when the calls are missing
// or the user is not root, and otherwise "unknown until tried" (a container or an admin setting can refuse
// root), unless `probes` (one per GPU, by position) holds the driver's answer.
// Why a GPU cannot be shown (lost, or its driver calls fail), or nullopt when it can: `info` lists the
// others and says so, rather than failing on the first bad GPU.
std::optional<std::string> unreadable(hw::Gpu& gpu);

std::string info_text(hw::GpuSystem& system, const std::vector<std::optional<SetProbe>>& probes = {});
nlohmann::json info_json(hw::GpuSystem& system, const std::vector<std::optional<SetProbe>>& probes = {});

}  // namespace wattwise::report
