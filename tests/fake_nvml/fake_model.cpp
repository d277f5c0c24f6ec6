#include "fake_model.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace wattwise::fake_nvml {

double monotonic_now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double FakeGpuModel::last_posting_s(double now_s) const {
  const double period_s = gpu_.counter_period_s;
  const double phase_s = gpu_.counter_phase_s;
  return phase_s + std::floor((now_s - phase_s) / period_s) * period_s;
}

double FakeGpuModel::energy_j(double t_s) const {
  // Before the last limit change the old limit applied, which is folded into the anchor.
  const double from_s = settings_.anchor_time_s;
  if (t_s <= from_s) return settings_.anchor_energy_j;
  return settings_.anchor_energy_j + gpu_.profile.energy_j(from_s, t_s, limit_w());
}

std::uint64_t FakeGpuModel::counter_mj(double now_s) const {
  return static_cast<std::uint64_t>(std::floor(energy_j(last_posting_s(now_s)) * 1000.0));
}

double FakeGpuModel::instant_power_w(double now_s) const {
  const double end_s = last_posting_s(now_s);
  const double period_s = gpu_.counter_period_s;
  return gpu_.profile.energy_j(end_s - period_s, end_s, limit_w()) / period_s;
}

double FakeGpuModel::average_power_w(double now_s) const {
  const double end_s = last_posting_s(now_s);
  return gpu_.profile.energy_j(end_s - kAveragePowerWindowS, end_s, limit_w()) / kAveragePowerWindowS;
}

double FakeGpuModel::power_now_w(double t_s) const {
  return std::min(gpu_.profile.power_w(t_s), limit_w());
}

std::vector<FakeSample> FakeGpuModel::buffered_samples(double now_s) const {
  const auto now_us = static_cast<std::int64_t>(std::floor(now_s * 1e6));
  const std::int64_t newest = now_us / kSamplePeriodUs;
  const std::int64_t oldest = (now_us - kSampleBufferUs) / kSamplePeriodUs + 1;
  std::vector<FakeSample> samples;
  for (std::int64_t k = std::max<std::int64_t>(oldest, 1); k <= newest; ++k) {
    const double end_s = static_cast<double>(k * kSamplePeriodUs) * 1e-6;
    const double start_s = end_s - static_cast<double>(kSamplePeriodUs) * 1e-6;
    samples.push_back(
        {k * kSamplePeriodUs, gpu_.profile.energy_j(start_s, end_s, limit_w()) / (end_s - start_s)});
  }
  return samples;
}

}  // namespace wattwise::fake_nvml
