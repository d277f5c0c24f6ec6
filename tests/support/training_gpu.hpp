#pragma once

// A training job's GPUs in virtual time, readings only (a plain hw::GpuReadings): each rank's iterations on
// a Schedule, power constant on 10 ms bins (busy inside the rank's iterations, 120 W between, +-2% per bin),
// a counter posted every kTrainingGpuPosting, 20 ms buffered samples and telemetry that follows the power.
// Not the FakeGpu of fake_gpu.hpp: its energy is an exact sum over the bins, fast enough for days of virtual
// time, where the FakeGpu integrates its power function in 50 us steps. Used by the long job of
// tests/measure/long_job.cpp (its unit tests and bench/long_job.cpp).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"

namespace wattwise::testing::training {

using namespace std::chrono_literals;

// The GPUs post their counter every kTrainingGpuPosting, at kTrainingGpuPostingPhase + n * that period.
inline constexpr Nanos kTrainingGpuPosting = 100ms;
inline constexpr Nanos kTrainingGpuPostingPhase = 3700us;

inline constexpr Nanos kBin = 10ms;
inline constexpr Nanos kSamplePeriod = 20ms;
inline constexpr Nanos kBufferSpan = 2400ms;

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Rank r's iteration k: [begin, end).
struct Iteration {
  Nanos begin;
  Nanos end;
};

class Schedule {
 public:
  Schedule(double per_s, std::size_t rank)
      : period_(static_cast<Nanos::rep>(1e9 / per_s)), offset_(1s + rank * 700us), rank_(rank) {}
  // Iteration k begins 0-15% of a period after k periods (a real step's time varies; a strictly periodic
  // load in step with the counter's postings would leave the samples' offset to the counter undetermined)
  // and lasts 70-84% of a period, so it ends before the next begins.
  Iteration at(std::int64_t k) const {
    const auto jitter = static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(k) * 31 + rank_ * 7919) % 150);
    const Nanos begin = offset_ + period_ * k + period_ * jitter / 1000;
    const auto extra = static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(k) * 131 + rank_) % 15);
    return {begin, begin + period_ * (70 + extra) / 100};
  }
  // The iteration whose begin is at or before t (-1 before the first).
  std::int64_t index_at(Nanos t) const { return t < offset_ ? -1 : (t - offset_) / period_; }
  double level_w(std::int64_t k) const {
    return 300.0 + static_cast<double>(mix(static_cast<std::uint64_t>(k) * 7 + rank_ * 1000003) % 101);
  }

 private:
  Nanos period_;
  Nanos offset_;
  std::size_t rank_;
};

// One GPU of the job, rank `index`'s (the top of this file says what it draws and reads).
class TrainingGpu final : public hw::GpuReadings {
 public:
  TrainingGpu(Clock& clock, const Schedule& schedule, std::size_t index, Nanos job_end)
      : clock_(clock), schedule_(schedule), job_end_(job_end) {
    identity_ = {static_cast<unsigned>(index), "GPU-long-" + std::to_string(index), "Simulated H100",
                 "00000000:0" + std::to_string(index) + ":00.0"};
  }

  double power_w(Nanos t) const {
    const std::int64_t bin = t / kBin;
    const Nanos middle = kBin * bin + kBin / 2;
    const double wobble = static_cast<double>(mix(static_cast<std::uint64_t>(bin) + identity_.index * 977) % 401) /
                              10000.0 -
                          0.02;
    double level = 120.0;
    if (middle < job_end_) {
      const std::int64_t k = schedule_.index_at(middle);
      if (k >= 0) {
        const Iteration it = schedule_.at(k);
        if (middle >= it.begin && middle < it.end) level = schedule_.level_w(k);
      }
    }
    return level * (1.0 + wobble);
  }
  // Joules over [t0, t1], both on bin edges or not.
  double energy_j(Nanos t0, Nanos t1) const {
    double joules = 0;
    for (Nanos t = t0; t < t1;) {
      const Nanos next = std::min(t1, kBin * (t / kBin + 1));
      joules += power_w(t) * to_seconds(next - t);
      t = next;
    }
    return joules;
  }

  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override {
    hw::Capabilities caps;
    caps.energy_counter = caps.power_instant = caps.power_samples = caps.clocks = true;
    return caps;
  }
  std::optional<std::uint64_t> energy_mj() override {
    const Nanos now = clock_.now();
    while (posted_at_ + kTrainingGpuPosting <= now) {
      posted_j_ += energy_j(posted_at_, posted_at_ + kTrainingGpuPosting);
      posted_at_ += kTrainingGpuPosting;
    }
    return static_cast<std::uint64_t>(std::llround(posted_j_ * 1000));
  }
  std::optional<double> power_instant_w() override {
    return power_w(clock_.now() / kTrainingGpuPosting * kTrainingGpuPosting);
  }
  std::optional<double> power_average_w() override { return std::nullopt; }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override {
    std::vector<hw::PowerSample> samples;
    const Nanos now = clock_.now();
    const Nanos offset = clock_.realtime_offset();
    for (std::int64_t k = std::max<std::int64_t>(1, (now - kBufferSpan) / kSamplePeriod);; ++k) {
      const Nanos end = kSamplePeriod * k;
      if (end > now) break;
      const auto stamp_us = static_cast<std::uint64_t>((end + offset).count() / 1000);
      if (stamp_us <= since_device_us) continue;
      samples.push_back({stamp_us, energy_j(end - kSamplePeriod, end) / to_seconds(kSamplePeriod)});
    }
    return samples;
  }
  hw::Telemetry telemetry() override {
    const double w = power_w(clock_.now());
    hw::Telemetry t;
    t.sm_clock_mhz = 1400 + static_cast<unsigned>(w);
    t.temp_c = 40 + static_cast<unsigned>(w / 20);
    t.util_gpu_pct = w > 200 ? 100 : 0;
    return t;
  }

  std::optional<hw::PowerLimits> power_limits() override { return std::nullopt; }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return {}; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return {}; }

 private:
  Clock& clock_;
  const Schedule& schedule_;
  Nanos job_end_;
  hw::GpuIdentity identity_;
  Nanos posted_at_ = kTrainingGpuPostingPhase - kTrainingGpuPosting;
  double posted_j_ = 1.0e6;
};

}  // namespace wattwise::testing::training
