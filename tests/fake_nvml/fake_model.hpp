#pragma once

#include <cstdint>
#include <vector>

#include "fake_config.hpp"
#include "fake_state.hpp"

namespace wattwise::fake_nvml {

// Timing of the H100 as measured (shared/reference/nvml-h100.md).
constexpr double kAveragePowerWindowS = 1.0;       // nvmlDeviceGetPowerUsage is a 1 s moving average
constexpr std::int64_t kSamplePeriodUs = 20000;    // buffered power samples
constexpr std::int64_t kSampleBufferUs = 2400000;  // how far back the sample buffer reaches

double monotonic_now_s();

struct FakeSample {
  std::int64_t monotonic_us = 0;  // the end of the 20 ms interval the sample averages
  double power_w = 0;
};

// What one fake GPU reads at a given CLOCK_MONOTONIC time, under its persistent settings. Tests use the
// same model to know exactly what the fake driver will report.
class FakeGpuModel {
 public:
  FakeGpuModel(const FakeGpuConfig& gpu, const FakeGpuSettings& settings) : gpu_(gpu), settings_(settings) {}

  double limit_w() const { return settings_.power_limit_mw / 1000.0; }
  // Exact energy used since the counter's origin, up to t.
  double energy_j(double t_s) const;
  // The counter as the driver reports it: posted only every counter_period_s (100 ms by default, at
  // counter_phase_s), so up to one period stale.
  std::uint64_t counter_mj(double now_s) const;
  double instant_power_w(double now_s) const;  // mean over the last completed posting period
  double average_power_w(double now_s) const;  // mean over the last 1 s (lags a step by ~1 s)
  double power_now_w(double t_s) const;        // min(profile, limit) at t
  // Samples whose 20 ms interval ended in (now - 2.4 s, now], oldest first.
  std::vector<FakeSample> buffered_samples(double now_s) const;

 private:
  double last_posting_s(double now_s) const;  // the latest counter posting at or before now
  const FakeGpuConfig& gpu_;
  FakeGpuSettings settings_;
};

}  // namespace wattwise::fake_nvml
