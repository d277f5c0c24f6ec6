#pragma once

// Everything `wattwise info` shows of the GPUs, read once, before anything is formatted: the report
// (report/info_report.hpp) formats a snapshot and reads no GPU, as google/benchmark's reporters receive
// results.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::hw {

// What a GPU reads right now, as nvidia-smi shows it: power, energy since the driver loaded, clocks,
// utilisation, temperature, P-state, memory used. Every field is absent where the GPU or driver cannot
// say (a call that fails costs that field only).
struct LiveReading {
  std::optional<double> power_w;   // instantaneous, else the ~1 s average
  std::optional<double> energy_j;  // the total-energy counter: since the driver loaded
  Telemetry telemetry;
};

LiveReading read_live(GpuReadings& gpu);

struct GpuSnapshot {
  GpuIdentity identity;
  // Why the GPU cannot be shown (lost, or its capability, limit or clock calls fail), or nullopt when it
  // can: `info` lists the others and says so, rather than failing on the first bad GPU. The fields below
  // `now` are only read when it is nullopt, except power_limits, which is absent when its call fails.
  std::optional<std::string> unreadable;
  LiveReading now;
  std::optional<PowerLimits> power_limits;
  Capabilities capabilities;
  std::vector<unsigned> mem_clocks_mhz;
  std::map<unsigned, std::vector<unsigned>> sm_clocks_mhz;  // by memory clock
};

struct SystemSnapshot {
  std::string backend;
  std::string driver_version;
  std::vector<GpuSnapshot> gpus;  // by position in the system
};

// Reads only: nothing is changed on any GPU.
SystemSnapshot read_snapshot(GpuSystem& system);

}  // namespace wattwise::hw
