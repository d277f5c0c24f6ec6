#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"

namespace wattwise::experiment {

// `--cooldown[=MAX_S]`: after each run, wait until every GPU has settled back to its idle state, so the
// next run does not start on a hot GPU (warmer silicon leaks more, and the first seconds would be charged
// to the previous setting).
struct CooldownOptions {
  Nanos max_wait = std::chrono::seconds(60);
  double power_tolerance = 0.05;      // power within 5% of the idle power measured before the first run
  double temperature_change_c = 1.0;  // and the temperature changed less than this ...
  Nanos temperature_window = std::chrono::seconds(5);  // ... over this long
  Nanos poll_period = std::chrono::milliseconds(250);
};

// Idle power of each GPU before the sweep starts (nullopt: no power reading).
struct IdleBaseline {
  std::vector<std::optional<double>> power_w;  // parallel to the GPU positions it was read for
};

IdleBaseline read_idle_baseline(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices);

struct CooldownResult {
  Nanos waited{0};
  bool settled = false;  // false: max_wait ran out or a stop was requested
};

// Polls power and temperature on `clock` until settled, max_wait has passed, or stop_requested() is true.
// A GPU that has no power reading is judged by its temperature alone, one with neither is settled.
CooldownResult cool_down(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                         const IdleBaseline& idle, Clock& clock, const CooldownOptions& options,
                         const std::function<bool()>& stop_requested);

}  // namespace wattwise::experiment
