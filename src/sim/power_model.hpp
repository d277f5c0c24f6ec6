#pragma once

#include <optional>

#include "sim/profiles.hpp"

namespace wattwise::sim {

// The settings that shape a busy GPU's operating point.
struct GpuSettings {
  double power_limit_w = 0;
  std::optional<unsigned> sm_clock_max_mhz;   // upper end of a locked SM clock range
  std::optional<unsigned> mem_clock_max_mhz;  // upper end of a locked memory clock range
};

// Where a busy GPU settles: mean power, relative throughput (1 = uncapped at boost) and clocks.
struct OperatingPoint {
  double power_w = 0;
  double speed = 1;
  unsigned sm_clock_mhz = 0;
  unsigned mem_clock_mhz = 0;
  bool power_capped = false;   // the limit, not the job, decided the clock
  bool clock_limited = false;  // a locked clock decided it
};

// Steady state of `workload` on `gpu` under `settings`; pure, so tests and the calibration use it directly.
OperatingPoint busy_operating_point(const SimGpuSpec& gpu, const WorkloadProfile& workload,
                                    const GpuSettings& settings);

}  // namespace wattwise::sim
