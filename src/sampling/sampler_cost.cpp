#include "sampling/sampler_cost.hpp"

#include <time.h>

namespace wattwise::sampling {

const char* to_string(GpuCall call) {
  switch (call) {
    case GpuCall::kEnergyCounter:
      return "energy_counter";
    case GpuCall::kPowerInstant:
      return "power_instant";
    case GpuCall::kPowerAverage:
      return "power_average";
    case GpuCall::kPowerSamples:
      return "power_samples";
    case GpuCall::kTelemetry:
      return "telemetry";
    case GpuCall::kPcieThroughput:
      return "pcie_throughput";
    case GpuCall::kCount:
      break;
  }
  return "unknown";
}

Nanos GpuSamplerCost::cpu() const {
  Nanos sum{0};
  for (const CallCost& cost : calls) sum += cost.cpu;
  return sum;
}

Nanos thread_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return Nanos{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

}  // namespace wattwise::sampling
