#include "sim/power_model.hpp"

#include <algorithm>
#include <cmath>

#include "sim/replay.hpp"

namespace wattwise::sim {
namespace {

// A slower memory clock slows memory-bound kernels a little and saves a little memory power.
constexpr double kMemorySpeedExponent = 0.3;
constexpr double kMemoryPowerShare = 0.1;  // of the dynamic power

double relative_clock(unsigned mhz, unsigned reference_mhz) {
  return std::clamp(static_cast<double>(mhz) / reference_mhz, 0.0, 1.0);
}

// A replayed table: speed relative to the highest limit's time, and the table's power scaled by this run's
// power noise (the job multiplied busy_power_w, which starts as the highest limit's power).
OperatingPoint replayed_operating_point(const SimGpuSpec& gpu, const WorkloadProfile& workload,
                                        const GpuSettings& settings) {
  const ReplayCurve& curve = *workload.replay;
  const ReplayCurve::Value top = curve.at(curve.max_limit_w());
  const ReplayCurve::Value here = curve.at(settings.power_limit_w);
  OperatingPoint point;
  point.power_w = here.energy_j / here.time_s * workload.busy_power_w / (top.energy_j / top.time_s);
  point.speed = top.time_s / here.time_s;
  point.sm_clock_mhz = gpu.boost_sm_clock_mhz;
  point.mem_clock_mhz = gpu.mem_clocks_mhz.front();
  return point;
}

}  // namespace

OperatingPoint busy_operating_point(const SimGpuSpec& gpu, const WorkloadProfile& workload,
                                    const GpuSettings& settings) {
  if (workload.replay) return replayed_operating_point(gpu, workload, settings);
  const unsigned max_mem_mhz = gpu.mem_clocks_mhz.front();
  const unsigned mem_mhz = std::min(settings.mem_clock_max_mhz.value_or(max_mem_mhz), max_mem_mhz);
  const double mem_ratio = relative_clock(mem_mhz, max_mem_mhz);

  const double static_w = workload.static_power_w;
  const double dynamic_w = (workload.busy_power_w - static_w) * (1.0 - kMemoryPowerShare * (1.0 - mem_ratio));
  const double a = workload.power_exponent;
  const auto power_at = [&](double f) { return static_w + dynamic_w * std::pow(f, a); };

  const double min_f = relative_clock(gpu.sm_clocks_mhz.back(), gpu.boost_sm_clock_mhz);
  double f = 1.0;
  OperatingPoint point;
  if (settings.sm_clock_max_mhz) {
    const double locked_f = relative_clock(*settings.sm_clock_max_mhz, gpu.boost_sm_clock_mhz);
    if (locked_f < f) {
      f = std::max(locked_f, min_f);
      point.clock_limited = true;
    }
  }
  const double cap_w = workload.cap_tracking * settings.power_limit_w;
  if (power_at(f) > cap_w) {
    // The controller lowers the clock until the mean power meets the cap; at the lowest clock it can do
    // no more, and the power stays above the cap (the real GPU would then also throttle harder).
    const double headroom = std::max(cap_w - static_w, 0.0);
    f = std::max(std::pow(headroom / dynamic_w, 1.0 / a), min_f);
    point.power_capped = true;
    point.clock_limited = false;
  }
  point.power_w = power_at(f);
  point.speed = std::pow(f, workload.throughput_exponent) * std::pow(mem_ratio, kMemorySpeedExponent);
  point.sm_clock_mhz = static_cast<unsigned>(std::lround(f * gpu.boost_sm_clock_mhz));
  point.mem_clock_mhz = mem_mhz;
  return point;
}

}  // namespace wattwise::sim
