#include "fake_gpu.hpp"

#include <algorithm>
#include <cmath>

namespace wattwise::sampling::testing {
namespace {

// Integration step for the ground truth: square waves in the tests switch on whole milliseconds.
constexpr Nanos kTruthStep = 50us;

}  // namespace

FakeGpu::FakeGpu(Clock& clock, PowerFunction power, FakeGpuOptions options, VirtualClock* cost_clock,
                 Nanos origin)
    : clock_(clock),
      power_(std::move(power)),
      options_(options),
      cost_clock_(cost_clock),
      origin_(origin),
      posted_at_(origin + options.counter_update_phase - options.counter_update_period) {}

double FakeGpu::true_energy_j(Nanos t0, Nanos t1) const {
  double joules = 0;
  for (Nanos t = t0; t < t1; t += kTruthStep) {
    const Nanos step = std::min(kTruthStep, t1 - t);
    joules += power_(t + step / 2) * to_seconds(step);  // midpoint rule
  }
  return joules;
}

int FakeGpu::counter_reads() const {
  std::lock_guard lock(mutex_);
  return counter_reads_;
}

hw::Capabilities FakeGpu::capabilities() {
  hw::Capabilities caps;
  caps.energy_counter = options_.has_counter;
  caps.power_instant = options_.has_instant;
  caps.power_average = options_.has_average;
  caps.power_samples = options_.has_samples;
  caps.clocks = true;
  return caps;
}

std::optional<std::uint64_t> FakeGpu::energy_mj() {
  if (!options_.has_counter) return std::nullopt;
  std::lock_guard lock(mutex_);
  ++counter_reads_;
  const Nanos now = clock_.now();
  while (posted_at_ + options_.counter_update_period <= now) {
    const Nanos next = posted_at_ + options_.counter_update_period;
    const Nanos from = std::max(posted_at_, origin_);
    if (options_.counter_reset_at && posted_at_ < *options_.counter_reset_at &&
        next >= *options_.counter_reset_at) {
      posted_j_ = true_energy_j(*options_.counter_reset_at, next);  // driver reloaded: starts from zero
    } else {
      posted_j_ += true_energy_j(from, next);
    }
    posted_at_ = next;
  }
  if (cost_clock_ != nullptr) cost_clock_->advance(options_.counter_read_cost);
  return static_cast<std::uint64_t>(std::llround(posted_j_ * 1000));
}

std::optional<double> FakeGpu::power_instant_w() {
  if (!options_.has_instant) return std::nullopt;
  const Nanos since_origin = clock_.now() - origin_;
  const Nanos updated =
      origin_ + since_origin / options_.instant_update_period * options_.instant_update_period;
  return power_(updated);
}

std::optional<double> FakeGpu::power_average_w() {
  if (!options_.has_average) return std::nullopt;
  const Nanos now = clock_.now();
  const Nanos from = std::max(origin_, now - 1s);
  if (now <= from) return power_(now);
  return true_energy_j(from, now) / to_seconds(now - from);
}

std::vector<hw::PowerSample> FakeGpu::power_samples_since(std::uint64_t since_device_us) {
  std::vector<hw::PowerSample> samples;
  if (!options_.has_samples) return samples;
  const Nanos now = clock_.now();
  const Nanos realtime_offset = clock_.realtime_offset();
  const Nanos period = options_.sample_period;
  // Sample k is the mean over (origin + (k-1) period, origin + k period], stamped late by sample_shift.
  const Nanos oldest = now - options_.buffer_span;
  std::int64_t k = std::max<std::int64_t>(1, (oldest - options_.sample_shift - origin_) / period);
  for (;; ++k) {
    const Nanos end = origin_ + period * k;
    const Nanos stamp = end + options_.sample_shift;
    if (stamp > now) break;
    if (stamp < oldest || stamp + realtime_offset < 0ns) continue;  // wall time before 1970 does not exist
    const auto stamp_us = static_cast<std::uint64_t>((stamp + realtime_offset).count() / 1000);
    if (stamp_us <= since_device_us) continue;
    samples.push_back(hw::PowerSample{stamp_us, true_energy_j(end - period, end) / to_seconds(period)});
  }
  return samples;
}

hw::Telemetry FakeGpu::telemetry() {
  hw::Telemetry t;
  t.sm_clock_mhz = 1980;
  t.temp_c = 45;
  return t;
}

}  // namespace wattwise::sampling::testing
