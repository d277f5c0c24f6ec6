#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::testing {

// Answers every reading from memory, at once: not the FakeGpu, whose readings integrate a power function, so
// that a benchmark times the sampler alone (bench/bench_sampling.cpp). Readings only: nothing sets it.
class InMemoryGpu final : public hw::GpuReadings {
 public:
  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override { return {}; }
  std::optional<std::uint64_t> energy_mj() override { return energy_mj_ += 31; }
  std::optional<double> power_instant_w() override { return 312.5; }
  std::optional<double> power_average_w() override { return 300.0; }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override {
    std::vector<hw::PowerSample> samples(25);  // 500 ms of 20 ms samples
    for (std::size_t i = 0; i < samples.size(); ++i) samples[i] = {since_device_us + 20'000 * (i + 1), 300.0};
    return samples;
  }
  hw::Telemetry telemetry() override {
    hw::Telemetry t;
    t.sm_clock_mhz = 1980;
    t.mem_clock_mhz = 2619;
    t.util_gpu_pct = 97;
    t.temp_c = 61;
    return t;
  }

  std::optional<hw::PowerLimits> power_limits() override { return std::nullopt; }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return {}; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return {}; }

 private:
  hw::GpuIdentity identity_{0, "GPU-bench", "in-memory", ""};
  std::uint64_t energy_mj_ = 0;
};

}  // namespace wattwise::testing
