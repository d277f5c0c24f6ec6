#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hw/gpu_snapshot.hpp"

namespace wattwise::report {

// The "now" table of `info`, one row per GPU.
std::string live_table(const hw::SystemSnapshot& system);
// The "now" object of `info --format json`, for one GPU.
nlohmann::json live_json(const hw::LiveReading& reading);

// `info --format csv`: one row per GPU, its identity, power limits and live readings (docs/info.md).
std::string info_csv(const hw::SystemSnapshot& system);

}  // namespace wattwise::report
