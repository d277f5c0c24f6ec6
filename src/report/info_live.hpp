#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"

namespace wattwise::report {

// What a GPU reads right now, as nvidia-smi shows it: power, energy since the driver loaded, clocks,
// utilisation, temperature, P-state, memory used. Every field is absent where the GPU or driver cannot
// say (a call that fails costs that field only).
struct LiveReading {
  std::optional<double> power_w;   // instantaneous, else the ~1 s average
  std::optional<double> energy_j;  // the total-energy counter: since the driver loaded
  hw::Telemetry telemetry;
};

LiveReading read_live(hw::Gpu& gpu);

// The "now" table of `info`, one row per GPU.
std::string live_table(hw::GpuSystem& system);
// The "now" object of `info --format json`, for one GPU.
nlohmann::json live_json(const LiveReading& reading);

// `info --format csv`: one row per GPU, its identity, power limits and live readings (docs/info.md).
std::string info_csv(hw::GpuSystem& system);

}  // namespace wattwise::report
