#pragma once

#include <optional>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::hw {

// A GPU that is only read: no power limits to report, no clocks to list, and every setter a no-op. The base
// of the readers' doubles in tests and benchmarks (the sampler, the process list, the cool-down), which
// otherwise each repeated these eight overrides; a real backend that cannot set anything throws instead
// (safety/read_only_gpu.hpp).
class GpuWithoutControls : public Gpu {
 public:
  std::optional<PowerLimits> power_limits() override { return std::nullopt; }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return {}; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return {}; }
  void set_power_limit_w(double) override {}
  void lock_sm_clocks_mhz(unsigned, unsigned) override {}
  void reset_sm_clocks() override {}
  void lock_mem_clocks_mhz(unsigned, unsigned) override {}
  void reset_mem_clocks() override {}
};

}  // namespace wattwise::hw
