#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::sim {

class ReplayCurve;

// The hardware half of a simulated GPU: what NVML would report about the board, and how it heats up.
struct SimGpuSpec {
  std::string key;   // "v100", as typed after --simulate
  std::string name;  // as NVML names the board, plus " (simulated)"
  double min_limit_w = 0;
  double max_limit_w = 0;
  double default_limit_w = 0;
  double idle_power_w = 0;
  // Right after the load starts under a cap, the controller needs a moment to pull the clock down: power
  // overshoots the limit by at most this fraction, for overshoot_duration (H100: ~790 W under 700 W).
  double overshoot_fraction = 0;
  Nanos overshoot_duration{0};
  unsigned boost_sm_clock_mhz = 0;  // the SM clock an uncapped job runs at
  unsigned idle_sm_clock_mhz = 0;
  std::vector<unsigned> sm_clocks_mhz;   // supported, descending (the same for every memory clock)
  std::vector<unsigned> mem_clocks_mhz;  // supported, descending; the first is the default
  double ambient_temp_c = 0;
  double thermal_c_per_w = 0;  // steady temperature rise per watt
  double thermal_tau_s = 0;    // time constant of the temperature's approach to steady state
  double memory_mib = 0;
};

// The job half: how one model's training loads this GPU. The power-frequency law, with f the SM clock
// relative to boost:  power = static_power_w + (busy_power_w - static_power_w) * f^power_exponent and
// throughput = samples_per_s * f^throughput_exponent. Under a power limit L the controller settles the mean
// power at cap_tracking * L (it regulates a fluctuating power, so the mean sits below the limit).
struct WorkloadProfile {
  std::string model;
  unsigned default_batch = 0;
  std::int64_t default_samples_per_epoch = 0;
  double samples_per_s = 0;  // uncapped, at the boost clock
  double busy_power_w = 0;   // uncapped mean power while training
  double static_power_w = 0;
  double cap_tracking = 1;
  double power_exponent = 3;
  double throughput_exponent = 0.5;
  double mem_used_mib = 0;
  unsigned util_mem_pct = 0;
  // Set for a replayed table (--simulate csv:PATH): speed and power come from it instead of the law above;
  // busy_power_w and samples_per_s are then its values at the highest limit (sim/replay.hpp).
  std::shared_ptr<const ReplayCurve> replay;
};

struct SimProfile {
  SimGpuSpec gpu;
  WorkloadProfile workload;
};

// Lookups by the names used on the command line ("v100", "resnet50"); unknown names are usage errors
// that list the valid ones.
const SimGpuSpec& find_gpu_spec(std::string_view gpu);
SimProfile find_profile(std::string_view gpu, std::string_view model);
// Every "gpu:model" pair that find_profile accepts.
std::vector<std::string> profile_names();

}  // namespace wattwise::sim
