#pragma once

#include <mutex>
#include <optional>
#include <utility>

#include "core/clock.hpp"
#include "hw/gpu.hpp"
#include "sim/power_model.hpp"
#include "sim/power_timeline.hpp"
#include "sim/profiles.hpp"

namespace wattwise::sim {

// A GPU model on a (virtual) clock, read through the same hw::Gpu interface as a real one. Its readings
// behave like an H100's (shared/reference/nvml-h100.md): the energy counter is the exact integral of the
// model's power but changes only every 100 ms; instantaneous power is the mean of the last 100 ms, updated
// every 100 ms; averaged power is the mean of the last second, updated every 100 ms; buffered samples are
// 20 ms means stamped with the device time in microseconds (= virtual time), and the buffer keeps 2.4 s.
// The update instants are offset from the epoch by a per-GPU phase, as on hardware they are unknown.
//
// The load comes from a SimJob: start_load/stop_load at given times. Power is piecewise constant between
// state changes (load, limit, clock locks), so every reading is exact. The job's progress is the integral
// of the GPU's relative speed ("work seconds": seconds of work at full speed).
// Thread-safe (the sampler may read from its own thread while the event loop drives the job).
class SimGpu final : public hw::Gpu {
 public:
  static constexpr Nanos kCounterPeriod = std::chrono::milliseconds(100);
  static constexpr Nanos kAveragingWindow = std::chrono::seconds(1);
  static constexpr Nanos kSamplePeriod = std::chrono::milliseconds(20);
  static constexpr Nanos kSampleBufferSpan = std::chrono::milliseconds(2400);

  // `drift` (sim/drift.hpp) multiplies the model's power from the GPU's creation on; none by default.
  SimGpu(unsigned index, SimGpuSpec spec, const Clock& clock, Drift drift = {});

  // hw::Gpu
  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override;
  std::optional<std::uint64_t> energy_mj() override;
  std::optional<double> power_instant_w() override;
  std::optional<double> power_average_w() override;
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override;
  hw::Telemetry telemetry() override;
  std::optional<hw::PowerLimits> power_limits() override;
  std::vector<unsigned> supported_mem_clocks_mhz() override;
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned mem_clock_mhz) override;
  void set_power_limit_w(double watts) override;
  void lock_sm_clocks_mhz(unsigned min_mhz, unsigned max_mhz) override;
  void reset_sm_clocks() override;
  void lock_mem_clocks_mhz(unsigned min_mhz, unsigned max_mhz) override;
  void reset_mem_clocks() override;

  // Driven by the job. `at` must not be earlier than the last state change (it is clamped).
  void start_load(const WorkloadProfile& workload, Nanos at);
  void stop_load(Nanos at);
  bool busy() const;

  // Work seconds done by time `t` (t at or after the last state change).
  double work_s_at(Nanos t) const;
  // When the work reaches `work_s` if nothing changes; nullopt while idle.
  std::optional<Nanos> time_when_work_reaches(double work_s) const;

  // The model itself, for tests and calibration: exact power and energy since construction.
  const SimGpuSpec& spec() const { return spec_; }
  GpuSettings settings() const;
  double model_power_w_at(Nanos t) const;
  // 0 at construction. Exact for t within the last ~3.4 s of readings (older segments are forgotten).
  double model_energy_j_at(Nanos t) const;
  // The overshoot bound: no reading exceeds limit * (1 + overshoot_fraction).
  double max_power_w() const;

 private:
  void apply_state(Nanos at, bool load_started);  // callers hold mutex_
  double work_s_at_locked(Nanos t) const;
  Nanos now_and_forget_old();
  Nanos last_update(Nanos now, Nanos period) const;  // latest update instant at or before now
  double mean_power_w(Nanos end, Nanos window) const;

  mutable std::mutex mutex_;
  SimGpuSpec spec_;
  const Clock& clock_;
  hw::GpuIdentity identity_;
  Nanos created_at_;
  Nanos update_phase_;  // offset of the 100 ms and 20 ms update grids
  std::uint64_t counter_base_mj_;

  GpuSettings settings_;
  std::optional<std::pair<unsigned, unsigned>> sm_lock_mhz_;
  std::optional<std::pair<unsigned, unsigned>> mem_lock_mhz_;
  std::optional<WorkloadProfile> load_;
  OperatingPoint point_;

  PowerTimeline timeline_;
  Nanos changed_at_;
  double work_s_at_change_ = 0;
  double speed_ = 0;
};

}  // namespace wattwise::sim
