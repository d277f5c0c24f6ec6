#pragma once

// The fake driver's world for the CPU benchmarks (bench_sampler_cpu, bench_exporter_cpu): N GPUs whose
// calls burn the CPU that an H100's do (shared/reference/nvml-h100.md), so both measure the same thing.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace wattwise::bench {

inline nlohmann::json call_costs_us(bool free_calls) {
  const double other_us = free_calls ? 0 : 20;
  nlohmann::json costs = {{"nvmlDeviceGetTotalEnergyConsumption", free_calls ? 0 : 3970},
                          {"nvmlDeviceGetFieldValues", free_calls ? 0 : 6},
                          {"nvmlDeviceGetPowerUsage", free_calls ? 0 : 2},
                          // CPU only: the H100's ~21 ms of wall time per direction is not modelled.
                          {"nvmlDeviceGetPcieThroughput", free_calls ? 0 : 907}};
  for (const char* call :
       {"nvmlDeviceGetSamples", "nvmlDeviceGetClockInfo", "nvmlDeviceGetUtilizationRates",
        "nvmlDeviceGetTemperature", "nvmlDeviceGetPerformanceState", "nvmlDeviceGetCurrentClocksEventReasons",
        "nvmlDeviceGetMemoryInfo",
        // Read only by the exporter, once a second: its job poll and the power limit gauge.
        "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetPowerManagementLimit",
        "nvmlDeviceGetPowerManagementLimitConstraints", "nvmlDeviceGetPowerManagementDefaultLimit",
        "nvmlDeviceGetEnforcedPowerLimit"})
    costs[call] = other_us;
  return costs;
}

// N GPUs switching between 450 W and 120 W every 0.2 s, each posting its counter at its own phase.
inline std::string write_fake_config(const std::filesystem::path& dir, unsigned gpus, bool free_calls) {
  nlohmann::json config = {{"state_file", (dir / "state.json").string()},
                           {"call_cost_us", call_costs_us(free_calls)},
                           {"gpus", nlohmann::json::array()}};
  for (unsigned i = 0; i < gpus; ++i) {
    config["gpus"].push_back(
        {{"uuid", fmt::format("GPU-bench-{}", i)},
         {"counter_phase_ms", (13 + 37 * i) % 100},
         {"profile", {{{"duration_s", 0.2}, {"watts", 450}}, {{"duration_s", 0.2}, {"watts", 120}}}}});
  }
  const std::filesystem::path path = dir / fmt::format("fake-{}.json", gpus);
  std::ofstream(path) << config.dump(2);
  return path.string();
}

}  // namespace wattwise::bench
