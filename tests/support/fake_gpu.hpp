#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "hw/gpu.hpp"

namespace wattwise::testing {

using namespace std::chrono_literals;

// Power drawn at a given time on the clock's time line: the test's ground truth.
using PowerFunction = std::function<double(Nanos)>;

// How a FakeGpu with a power function reads, like the H100 of shared/reference/nvml-h100.md: the counter
// posts every 100 ms (at a phase that is not a multiple of the polling period), the instantaneous field
// holds the value of its last ~100 ms update, the averaged power is a 1 s moving average, and buffered
// samples are 20 ms means whose device stamps can run late by `sample_shift`.
struct FakeGpuOptions {
  Nanos counter_update_period = 100ms;
  Nanos counter_update_phase = 3700us;
  Nanos counter_read_cost = 0ns;  // advances the VirtualClock given to the fake, if any
  std::optional<Nanos> counter_reset_at;
  Nanos instant_update_period = 100ms;
  Nanos sample_period = 20ms;
  Nanos sample_shift = 0ns;
  Nanos buffer_span = 2400ms;
  bool has_counter = true;
  bool has_instant = true;
  bool has_average = true;
  bool has_samples = true;
};

// The one fake GPU of the tests and benchmarks, a whole hw::Gpu, made in one of two ways:
//  - with settings: FakeGpu(index, uuid, limit_w[, limit_file]) has power limits (100-700 W), supported
//    clocks and controls that are logged (`calls`) and may be made to fail, and no readings unless the
//    knobs below give them (the safety and experiment tests). Its power limit may live in a file, so a
//    second process (the watchdog) sees the limit a first process set.
//  - with readings: FakeGpu(clock, power, options) reads like an H100 for a known power function (the
//    sampler, measure, exporter and window tests); it reports no limits and no supported clocks.
// The knobs (public fields) add or change readings in both: a power or telemetry function, the compute
// processes, PCIe throughput, and a hook before every reading (which may throw, block or spin).
class FakeGpu final : public hw::Gpu {
 public:
  FakeGpu(unsigned index, std::string uuid, double current_limit_w, std::filesystem::path limit_file = {});
  // The device's life starts at `origin`. `cost_clock` (optional) is advanced by each counter read.
  FakeGpu(Clock& clock, PowerFunction power, FakeGpuOptions options = {}, VirtualClock* cost_clock = nullptr,
          Nanos origin = 0ns);

  // Knobs.
  hw::GpuIdentity id;
  hw::Capabilities caps;
  bool fail_set_power_limit = false;
  bool fail_reset_sm_clocks = false;
  std::function<void()> before_set;  // runs at the start of every control call
  std::vector<std::string> calls;    // the control calls, in order
  bool sm_locked = false;
  bool mem_locked = false;
  // Runs before every reading, given its name ("energy", "instant", "average", "samples", "telemetry").
  std::function<void(const char* call)> before_reading;
  // Without a power function: the instantaneous and averaged power, and the telemetry.
  std::function<std::optional<double>()> power_w;
  std::function<hw::Telemetry()> telemetry_now;
  std::function<std::optional<std::vector<hw::GpuProcess>>()> processes;  // unset: nullopt
  std::optional<double> pcie_tx_mbps;  // added to every telemetry reading
  std::optional<double> pcie_rx_mbps;

  double limit_w();
  // Ground truth of a GPU with a power function: its integral over [t0, t1], in joules.
  double true_energy_j(Nanos t0, Nanos t1) const;
  int counter_reads() const;

  const hw::GpuIdentity& identity() const override { return id; }
  hw::Capabilities capabilities() override { return caps; }
  std::optional<std::uint64_t> energy_mj() override;
  std::optional<double> power_instant_w() override;
  std::optional<double> power_average_w() override;
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override;
  hw::Telemetry telemetry() override;
  std::optional<std::vector<hw::GpuProcess>> compute_processes() override {
    return processes ? processes() : std::nullopt;
  }
  std::optional<hw::PowerLimits> power_limits() override;
  std::vector<unsigned> supported_mem_clocks_mhz() override { return mem_clocks_; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return sm_clocks_; }
  void set_power_limit_w(double watts) override;
  void lock_sm_clocks_mhz(unsigned, unsigned) override;
  void reset_sm_clocks() override;
  void lock_mem_clocks_mhz(unsigned, unsigned) override;
  void reset_mem_clocks() override;

 private:
  void reading(const char* call) {
    if (before_reading) before_reading(call);
  }
  void control(const std::string& name);
  void store_limit(double watts);
  double load_limit();

  // With settings.
  std::optional<hw::PowerLimits> limits_;
  std::filesystem::path limit_file_;
  std::vector<unsigned> mem_clocks_;
  std::vector<unsigned> sm_clocks_;

  // With readings.
  Clock* clock_ = nullptr;
  PowerFunction power_;
  FakeGpuOptions options_;
  VirtualClock* cost_clock_ = nullptr;
  Nanos origin_{0};
  mutable std::mutex mutex_;
  // The counter's posted value and the instant it was posted at (advanced lazily).
  Nanos posted_at_{0};
  double posted_j_ = 1.0e6;  // a counter does not start at zero
  int counter_reads_ = 0;
};

namespace fake_gpu_detail {

// Integration step for the ground truth: square waves in the tests switch on whole milliseconds.
inline constexpr Nanos kTruthStep = 50us;

}  // namespace fake_gpu_detail

inline FakeGpu::FakeGpu(unsigned index, std::string uuid, double current_limit_w,
                        std::filesystem::path limit_file)
    : caps{.power_limit_read = true,
           .power_limit_set = true,
           .sm_clock_lock = true,
           .mem_clock_lock = true,
           .set_permission_note = {}},
      limits_(hw::PowerLimits{100, 700, 700, current_limit_w, current_limit_w}),
      limit_file_(std::move(limit_file)),
      mem_clocks_{2619},
      sm_clocks_{1410, 1980} {
  id.index = index;
  id.uuid = std::move(uuid);
  id.name = "Fake H100";
  if (!limit_file_.empty() && !std::filesystem::exists(limit_file_)) store_limit(current_limit_w);
}

inline FakeGpu::FakeGpu(Clock& clock, PowerFunction power, FakeGpuOptions options, VirtualClock* cost_clock,
                 Nanos origin)
    : id{0, "GPU-fake", "Fake H100", "00000000:00:00.0"},
      clock_(&clock),
      power_(std::move(power)),
      options_(options),
      cost_clock_(cost_clock),
      origin_(origin),
      posted_at_(origin + options.counter_update_phase - options.counter_update_period) {
  caps.energy_counter = options_.has_counter;
  caps.power_instant = options_.has_instant;
  caps.power_average = options_.has_average;
  caps.power_samples = options_.has_samples;
  caps.clocks = true;
}

inline double FakeGpu::limit_w() {
  if (!limits_) return 0;
  return limit_file_.empty() ? limits_->current_w : load_limit();
}

inline double FakeGpu::true_energy_j(Nanos t0, Nanos t1) const {
  double joules = 0;
  for (Nanos t = t0; t < t1; t += fake_gpu_detail::kTruthStep) {
    const Nanos step = std::min(fake_gpu_detail::kTruthStep, t1 - t);
    joules += power_(t + step / 2) * to_seconds(step);  // midpoint rule
  }
  return joules;
}

inline int FakeGpu::counter_reads() const {
  std::lock_guard lock(mutex_);
  return counter_reads_;
}

inline std::optional<std::uint64_t> FakeGpu::energy_mj() {
  reading("energy");
  if (!power_ || !options_.has_counter) return std::nullopt;
  std::lock_guard lock(mutex_);
  ++counter_reads_;
  const Nanos now = clock_->now();
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

inline std::optional<double> FakeGpu::power_instant_w() {
  reading("instant");
  if (!power_) return power_w ? power_w() : std::nullopt;
  if (!options_.has_instant) return std::nullopt;
  const Nanos since_origin = clock_->now() - origin_;
  const Nanos updated =
      origin_ + since_origin / options_.instant_update_period * options_.instant_update_period;
  return power_(updated);
}

inline std::optional<double> FakeGpu::power_average_w() {
  reading("average");
  if (!power_) return power_w ? power_w() : std::nullopt;
  if (!options_.has_average) return std::nullopt;
  const Nanos now = clock_->now();
  const Nanos from = std::max(origin_, now - 1s);
  if (now <= from) return power_(now);
  return true_energy_j(from, now) / to_seconds(now - from);
}

inline std::vector<hw::PowerSample> FakeGpu::power_samples_since(std::uint64_t since_device_us) {
  reading("samples");
  std::vector<hw::PowerSample> samples;
  if (!power_ || !options_.has_samples) return samples;
  const Nanos now = clock_->now();
  const Nanos realtime_offset = clock_->realtime_offset();
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

inline hw::Telemetry FakeGpu::telemetry() {
  reading("telemetry");
  hw::Telemetry t;
  if (telemetry_now) {
    t = telemetry_now();
  } else if (power_) {
    t.sm_clock_mhz = 1980;
    t.temp_c = 45;
  }
  if (pcie_tx_mbps) t.pcie_tx_mbps = pcie_tx_mbps;
  if (pcie_rx_mbps) t.pcie_rx_mbps = pcie_rx_mbps;
  return t;
}

inline std::optional<hw::PowerLimits> FakeGpu::power_limits() {
  if (!limits_) return std::nullopt;
  hw::PowerLimits limits = *limits_;
  limits.current_w = limits.enforced_w = limit_w();
  return limits;
}

inline void FakeGpu::set_power_limit_w(double watts) {
  control("set_power_limit_w " + std::to_string(static_cast<int>(watts)));
  if (fail_set_power_limit) throw environment_error("fake: set power limit failed");
  if (!limit_file_.empty()) {
    store_limit(watts);
  } else if (limits_) {
    limits_->current_w = watts;
  }
}

inline void FakeGpu::lock_sm_clocks_mhz(unsigned, unsigned) {
  control("lock_sm_clocks");
  sm_locked = true;
}

inline void FakeGpu::reset_sm_clocks() {
  control("reset_sm_clocks");
  if (fail_reset_sm_clocks) throw environment_error("fake: reset SM clocks failed");
  sm_locked = false;
}

inline void FakeGpu::lock_mem_clocks_mhz(unsigned, unsigned) {
  control("lock_mem_clocks");
  mem_locked = true;
}

inline void FakeGpu::reset_mem_clocks() {
  control("reset_mem_clocks");
  mem_locked = false;
}

inline void FakeGpu::control(const std::string& name) {
  if (before_set) before_set();
  calls.push_back(name);
}

inline void FakeGpu::store_limit(double watts) {
  // Write-then-rename so the reading process never sees a half-written number.
  const auto temp = limit_file_.string() + ".tmp";
  std::ofstream(temp) << watts << "\n";
  std::filesystem::rename(temp, limit_file_);
}

inline double FakeGpu::load_limit() {
  double watts = 0;
  std::ifstream(limit_file_) >> watts;
  return watts;
}


// GPUs that are FakeGpus, owned.
class FakeGpuSystem final : public hw::ControllableGpuSystem {
 public:
  FakeGpu& add(std::unique_ptr<FakeGpu> gpu) {
    gpus_.push_back(std::move(gpu));
    return *gpus_.back();
  }
  FakeGpu& fake(std::size_t index) { return *gpus_.at(index); }
  std::string driver_version() override { return "fake"; }
  std::string backend() const override { return "fake"; }
  std::size_t count() const override { return gpus_.size(); }
  FakeGpu& gpu(std::size_t index) override { return *gpus_.at(index); }

 private:
  std::vector<std::unique_ptr<FakeGpu>> gpus_;
};

}  // namespace wattwise::testing
