#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_snapshot.hpp"

namespace wattwise::report {

// What the driver answered when asked to set a GPU's power limit to the value it already has
// (`wattwise info --probe`, the same question a sweep asks before its first change).
struct SetProbe {
  std::optional<bool> allowed;  // nullopt: could not ask (another wattwise holds the GPU)
  std::string note;             // the driver's refusal, or why it could not be asked
};

// `wattwise info`: GPUs, limits, clocks, capabilities and permissions, for people and for programs, from
// the readings gathered first (hw::read_snapshot): formatting reads no GPU. Whether settings may change is
// "no" when the calls are missing or the user is not root, and otherwise "unknown until tried" (a container
// or an admin setting can refuse root), unless `probes` (one per GPU, by position) holds the driver's
// answer. A GPU that is unreadable is listed as such; the others are shown.
std::string info_text(const hw::SystemSnapshot& system,
                      const std::vector<std::optional<SetProbe>>& probes = {});
nlohmann::json info_json(const hw::SystemSnapshot& system,
                         const std::vector<std::optional<SetProbe>>& probes = {});

}  // namespace wattwise::report
