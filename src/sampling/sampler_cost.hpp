#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/counter_schedule.hpp"

namespace wattwise::sampling {

// The kinds of driver call the sampler makes, one per hw::GpuReadings reading. On an H100 an energy-counter read
// costs ~4 ms of CPU (the driver spins) and a PCIe-throughput read ~0.9 ms of CPU and ~21 ms of wall time
// per direction; the rest cost microseconds (docs/evidence/node-h100.md). Counting each kind per GPU says
// on a real node where the sampler's CPU goes (docs/measure-json.md, `sampler_cost`).
enum class GpuCall : std::size_t {
  kEnergyCounter,   // nvmlDeviceGetTotalEnergyConsumption
  kPowerInstant,    // nvmlDeviceGetFieldValues(NVML_FI_DEV_POWER_INSTANT)
  kPowerAverage,    // nvmlDeviceGetPowerUsage (only where there is no instantaneous power)
  kPowerSamples,    // nvmlDeviceGetSamples(TOTAL_POWER), sized then fetched: two calls a drain
  kTelemetry,       // clocks, utilisation, temperature, P-state, clock-event reasons, memory: seven calls
  kPcieThroughput,  // nvmlDeviceGetPcieThroughput TX and RX (only with SamplerConfig::pcie_period)
  kCount,
};
inline constexpr std::size_t kGpuCallKinds = static_cast<std::size_t>(GpuCall::kCount);

// The JSON name of a kind: energy_counter, power_instant, power_average, power_samples, telemetry,
// pcie_throughput.
const char* to_string(GpuCall call);

struct CallCost {
  std::uint64_t calls = 0;  // sampler readings of this kind (one hw::GpuReadings call each), failed ones included
  Nanos cpu{0};             // CPU time of the calling thread inside them (CLOCK_THREAD_CPUTIME_ID)
  Nanos wall{0};            // time on the sampler's clock inside them (virtual in simulations)
};

// What sampling one GPU cost during a measurement.
struct GpuSamplerCost {
  unsigned gpu_index = 0;
  std::array<CallCost, kGpuCallKinds> calls{};
  CounterScheduleStats counter;         // where the counter reads went
  std::optional<Nanos> posting_period;  // the grid the counter schedule last knew; nullopt: none
  Nanos cpu() const;                    // summed over the kinds
  const CallCost& operator[](GpuCall call) const { return calls[static_cast<std::size_t>(call)]; }
};

// The CPU time the calling thread has used so far (CLOCK_THREAD_CPUTIME_ID).
Nanos thread_cpu_time();

// Adds one call's CPU and wall time to `cost` when it goes out of scope, also when the call threw.
class CallTimer {
 public:
  CallTimer(CallCost& cost, const Clock& clock)
      : cost_(cost), clock_(clock), cpu0_(thread_cpu_time()), wall0_(clock.now()) {}
  ~CallTimer() {
    ++cost_.calls;
    cost_.cpu += thread_cpu_time() - cpu0_;
    cost_.wall += clock_.now() - wall0_;
  }
  CallTimer(const CallTimer&) = delete;
  CallTimer& operator=(const CallTimer&) = delete;

 private:
  CallCost& cost_;
  const Clock& clock_;
  Nanos cpu0_;
  Nanos wall0_;
};

}  // namespace wattwise::sampling
