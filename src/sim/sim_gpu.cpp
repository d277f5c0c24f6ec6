#include "sim/sim_gpu.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

#include "core/error.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;

// NVML clocks-event reason bits.
constexpr std::uint64_t kReasonGpuIdle = 0x1;
constexpr std::uint64_t kReasonApplicationsClocks = 0x2;
constexpr std::uint64_t kReasonSwPowerCap = 0x4;

constexpr double kIdleMemUsedMib = 310;
constexpr unsigned kBusyPstate = 0;
constexpr unsigned kIdlePstate = 8;
constexpr double kLimitToleranceW = 1e-6;

// `clocks_mhz` is descending (SimGpuSpec says so); telemetry asks this on every fast tick, so a binary
// search rather than a scan of ~190 clocks. On a tie the higher clock wins, as the first in the list.
unsigned nearest_supported(const std::vector<unsigned>& clocks_mhz, unsigned mhz) {
  const auto at_or_below = std::lower_bound(clocks_mhz.begin(), clocks_mhz.end(), mhz, std::greater<>());
  if (at_or_below == clocks_mhz.begin()) return clocks_mhz.front();
  const unsigned above = *std::prev(at_or_below);
  if (at_or_below == clocks_mhz.end()) return above;
  return above - mhz <= mhz - *at_or_below ? above : *at_or_below;
}

PowerTimeline::Thermal thermal_of(const SimGpuSpec& spec) {
  return PowerTimeline::Thermal{spec.ambient_temp_c, spec.thermal_c_per_w, spec.thermal_tau_s};
}

}  // namespace

SimGpu::SimGpu(unsigned index, SimGpuSpec spec, const Clock& clock, Drift drift)
    : spec_(std::move(spec)),
      clock_(clock),
      identity_{index, fmt::format("GPU-5157a000-{:04x}-4000-8000-{:012x}", index, 0x5eed00 + index),
                spec_.name, fmt::format("00000000:{:02X}:00.0", 0x18 + index)},
      created_at_(clock.now()),
      update_phase_(37ms + 13ms * index),
      counter_base_mj_(1'234'567'890ULL + 1'000'003ULL * index),
      settings_{spec_.default_limit_w, std::nullopt, std::nullopt},
      timeline_(created_at_, spec_.idle_power_w, thermal_of(spec_), drift),
      changed_at_(created_at_) {}

hw::Capabilities SimGpu::capabilities() {
  hw::Capabilities caps;
  caps.energy_counter = caps.power_instant = caps.power_average = caps.power_samples = true;
  caps.clocks = caps.utilization = caps.temperature = caps.pstate = caps.throttle_reasons = true;
  caps.memory_used = caps.power_limit_read = caps.power_limit_set = true;
  caps.sm_clock_lock = caps.mem_clock_lock = true;
  caps.pcie_throughput = false;  // not modelled: reported absent
  return caps;
}

Nanos SimGpu::now_and_forget_old() {
  const Nanos now = clock_.now();
  // Keep a margin beyond the sample buffer and the averaging window.
  timeline_.forget_before(now - kSampleBufferSpan - kAveragingWindow);
  return now;
}

Nanos SimGpu::last_update(Nanos now, Nanos period) const {
  const auto since_phase = (now - update_phase_).count();
  auto periods = since_phase / period.count();
  if (since_phase < 0 && since_phase % period.count() != 0) --periods;  // floor, not truncation
  return update_phase_ + period * periods;
}

double SimGpu::mean_power_w(Nanos end, Nanos window) const {
  return (timeline_.energy_j_at(end) - timeline_.energy_j_at(end - window)) / to_seconds(window);
}

std::optional<std::uint64_t> SimGpu::energy_mj() {
  std::lock_guard lock(mutex_);
  const Nanos update = last_update(now_and_forget_old(), kCounterPeriod);
  const double energy_mj = std::max(timeline_.energy_j_at(update) * 1000.0, 0.0);
  return counter_base_mj_ + static_cast<std::uint64_t>(std::llround(energy_mj));
}

std::optional<double> SimGpu::power_instant_w() {
  std::lock_guard lock(mutex_);
  return mean_power_w(last_update(now_and_forget_old(), kCounterPeriod), kCounterPeriod);
}

std::optional<double> SimGpu::power_average_w() {
  std::lock_guard lock(mutex_);
  return mean_power_w(last_update(now_and_forget_old(), kCounterPeriod), kAveragingWindow);
}

std::vector<hw::PowerSample> SimGpu::power_samples_since(std::uint64_t since_device_us) {
  std::lock_guard lock(mutex_);
  const Nanos now = now_and_forget_old();
  const Nanos newest = last_update(now, kSamplePeriod);
  // The buffer starts empty when the GPU appears and keeps the last 2.4 s.
  const Nanos oldest = std::max(newest - kSampleBufferSpan + kSamplePeriod, created_at_ + kSamplePeriod);
  std::vector<hw::PowerSample> samples;
  // Consecutive samples share an edge: the energy at one sample's end is the next one's start, so each
  // new sample costs one timeline lookup (this runs on every drain of every simulated run).
  std::optional<double> energy_at_previous_j;
  for (Nanos t = last_update(oldest + kSamplePeriod - Nanos{1}, kSamplePeriod); t <= newest;
       t += kSamplePeriod) {
    const auto device_us = static_cast<std::uint64_t>(std::max<std::int64_t>(t.count() / 1000, 0));
    if (device_us <= since_device_us) continue;
    const double start_j =
        energy_at_previous_j ? *energy_at_previous_j : timeline_.energy_j_at(t - kSamplePeriod);
    const double end_j = timeline_.energy_j_at(t);
    samples.push_back(hw::PowerSample{device_us, (end_j - start_j) / to_seconds(kSamplePeriod)});
    energy_at_previous_j = end_j;
  }
  return samples;
}

hw::Telemetry SimGpu::telemetry() {
  std::lock_guard lock(mutex_);
  const Nanos now = now_and_forget_old();
  hw::Telemetry values;
  if (load_) {
    values.sm_clock_mhz = nearest_supported(spec_.sm_clocks_mhz, point_.sm_clock_mhz);
    values.util_gpu_pct = 100;
    values.util_mem_pct = load_->util_mem_pct;
    values.pstate = kBusyPstate;
    values.throttle_reasons = (point_.power_capped ? kReasonSwPowerCap : 0) |
                              (point_.clock_limited ? kReasonApplicationsClocks : 0);
    values.mem_used_mib = load_->mem_used_mib;
  } else {
    values.sm_clock_mhz = spec_.idle_sm_clock_mhz;
    values.util_gpu_pct = 0;
    values.util_mem_pct = 0;
    values.pstate = kIdlePstate;
    values.throttle_reasons = kReasonGpuIdle;
    values.mem_used_mib = kIdleMemUsedMib;
  }
  values.mem_clock_mhz = settings_.mem_clock_max_mhz.value_or(spec_.mem_clocks_mhz.front());
  values.temp_c = static_cast<unsigned>(std::lround(timeline_.temperature_c_at(now)));
  return values;
}

std::optional<hw::PowerLimits> SimGpu::power_limits() {
  std::lock_guard lock(mutex_);
  return hw::PowerLimits{spec_.min_limit_w, spec_.max_limit_w, spec_.default_limit_w, settings_.power_limit_w,
                         settings_.power_limit_w};
}

std::vector<unsigned> SimGpu::supported_mem_clocks_mhz() {
  return spec_.mem_clocks_mhz;
}

std::vector<unsigned> SimGpu::supported_sm_clocks_mhz(unsigned mem_clock_mhz) {
  const auto& mem = spec_.mem_clocks_mhz;
  if (std::find(mem.begin(), mem.end(), mem_clock_mhz) == mem.end()) return {};
  return spec_.sm_clocks_mhz;
}

void SimGpu::set_power_limit_w(double watts) {
  if (!(watts >= spec_.min_limit_w - kLimitToleranceW && watts <= spec_.max_limit_w + kLimitToleranceW)) {
    throw usage_error(fmt::format("power limit {} W is out of range for GPU {} ({}): choose {}-{} W", watts,
                                  identity_.index, spec_.name, spec_.min_limit_w, spec_.max_limit_w));
  }
  std::lock_guard lock(mutex_);
  settings_.power_limit_w = watts;
  apply_state(clock_.now(), false);
}

void SimGpu::lock_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) {
  const unsigned lowest = spec_.sm_clocks_mhz.back();
  const unsigned highest = spec_.sm_clocks_mhz.front();
  if (min_mhz > max_mhz || min_mhz < lowest || max_mhz > highest) {
    throw usage_error(
        fmt::format("SM clock range {}-{} MHz is invalid for GPU {} ({}): choose within {}-{} MHz", min_mhz,
                    max_mhz, identity_.index, spec_.name, lowest, highest));
  }
  std::lock_guard lock(mutex_);
  sm_lock_mhz_ = {min_mhz, max_mhz};
  settings_.sm_clock_max_mhz = max_mhz;
  apply_state(clock_.now(), false);
}

void SimGpu::reset_sm_clocks() {
  std::lock_guard lock(mutex_);
  sm_lock_mhz_.reset();
  settings_.sm_clock_max_mhz.reset();
  apply_state(clock_.now(), false);
}

void SimGpu::lock_mem_clocks_mhz(unsigned min_mhz, unsigned max_mhz) {
  const unsigned lowest = spec_.mem_clocks_mhz.back();
  const unsigned highest = spec_.mem_clocks_mhz.front();
  if (min_mhz > max_mhz || min_mhz < lowest || max_mhz > highest) {
    throw usage_error(
        fmt::format("memory clock range {}-{} MHz is invalid for GPU {} ({}): choose within {}-{} MHz",
                    min_mhz, max_mhz, identity_.index, spec_.name, lowest, highest));
  }
  std::lock_guard lock(mutex_);
  mem_lock_mhz_ = {min_mhz, max_mhz};
  settings_.mem_clock_max_mhz = max_mhz;
  apply_state(clock_.now(), false);
}

void SimGpu::reset_mem_clocks() {
  std::lock_guard lock(mutex_);
  mem_lock_mhz_.reset();
  settings_.mem_clock_max_mhz.reset();
  apply_state(clock_.now(), false);
}

void SimGpu::start_load(const WorkloadProfile& workload, Nanos at) {
  std::lock_guard lock(mutex_);
  load_ = workload;
  apply_state(at, true);
}

void SimGpu::stop_load(Nanos at) {
  std::lock_guard lock(mutex_);
  load_.reset();
  apply_state(at, false);
}

double SimGpu::max_power_w() const {
  std::lock_guard lock(mutex_);
  return std::max(settings_.power_limit_w * (1.0 + spec_.overshoot_fraction), spec_.idle_power_w);
}

void SimGpu::apply_state(Nanos at, bool load_started) {
  at = std::max(at, changed_at_);
  work_s_at_change_ = work_s_at_locked(at);
  changed_at_ = at;
  if (!load_) {
    point_ = OperatingPoint{};
    speed_ = 0;
    timeline_.set_power_from(at, spec_.idle_power_w);
    return;
  }
  point_ = busy_operating_point(spec_, *load_, settings_);
  speed_ = point_.speed;
  if (load_started && point_.power_capped) {
    // The controller reacts after the load arrives: a brief overshoot above the limit, then the cap.
    const double overshoot_w =
        std::min(load_->busy_power_w, settings_.power_limit_w * (1.0 + spec_.overshoot_fraction));
    timeline_.set_power_from(at, std::max(overshoot_w, point_.power_w));
    timeline_.set_power_from(at + spec_.overshoot_duration, point_.power_w);
  } else {
    timeline_.set_power_from(at, point_.power_w);
  }
}

double SimGpu::work_s_at(Nanos t) const {
  std::lock_guard lock(mutex_);
  return work_s_at_locked(t);
}

double SimGpu::work_s_at_locked(Nanos t) const {
  return work_s_at_change_ + speed_ * std::max(to_seconds(t - changed_at_), 0.0);
}

std::optional<Nanos> SimGpu::time_when_work_reaches(double work_s) const {
  std::lock_guard lock(mutex_);
  if (work_s <= work_s_at_change_) return changed_at_;
  if (speed_ <= 0) return std::nullopt;
  // Round up, so that at the returned time the work has been done.
  const double seconds = (work_s - work_s_at_change_) / speed_;
  return changed_at_ + Nanos{static_cast<std::int64_t>(std::ceil(seconds * 1e9))};
}

bool SimGpu::busy() const {
  std::lock_guard lock(mutex_);
  return load_.has_value();
}

GpuSettings SimGpu::settings() const {
  std::lock_guard lock(mutex_);
  return settings_;
}

double SimGpu::model_power_w_at(Nanos t) const {
  std::lock_guard lock(mutex_);
  return timeline_.power_w_at(t);
}

double SimGpu::model_energy_j_at(Nanos t) const {
  std::lock_guard lock(mutex_);
  return timeline_.energy_j_at(t);
}

}  // namespace wattwise::sim
