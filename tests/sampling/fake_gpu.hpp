#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>

#include "core/clock.hpp"
#include "hw/gpu.hpp"
#include "../support/readings_only_gpu.hpp"

namespace wattwise::sampling::testing {

using namespace std::chrono_literals;

// Power drawn at a given time on the clock's time line: the test's ground truth.
using PowerFunction = std::function<double(Nanos)>;

// Behaves like the H100 of shared/reference/nvml-h100.md, for a known power function:
// the counter posts every 100 ms (at a phase that is not a multiple of the polling period), the
// instantaneous field holds the value of its last ~100 ms update, the averaged power is a 1 s moving
// average, and buffered samples are 20 ms means whose device stamps can run late by `sample_shift`.
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

class FakeGpu final : public wattwise::testing::ReadingsOnlyGpu {
 public:
  // The device's life starts at `origin`. `cost_clock` (optional) is advanced by each counter read.
  FakeGpu(Clock& clock, PowerFunction power, FakeGpuOptions options = {}, VirtualClock* cost_clock = nullptr,
          Nanos origin = 0ns);

  // Ground truth: the integral of the power function over [t0, t1], in joules.
  double true_energy_j(Nanos t0, Nanos t1) const;
  int counter_reads() const;

  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override;
  std::optional<std::uint64_t> energy_mj() override;
  std::optional<double> power_instant_w() override;
  std::optional<double> power_average_w() override;
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t since_device_us) override;
  hw::Telemetry telemetry() override;

 private:
  Clock& clock_;
  PowerFunction power_;
  FakeGpuOptions options_;
  VirtualClock* cost_clock_;
  Nanos origin_;
  hw::GpuIdentity identity_{0, "GPU-fake", "Fake H100", "00000000:00:00.0"};
  mutable std::mutex mutex_;
  // The counter's posted value and the instant it was posted at (advanced lazily).
  Nanos posted_at_;
  double posted_j_ = 1.0e6;  // a counter does not start at zero
  int counter_reads_ = 0;
};

}  // namespace wattwise::sampling::testing
