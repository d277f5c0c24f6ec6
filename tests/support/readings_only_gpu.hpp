#pragma once

#include <optional>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::testing {

// The base of the test and benchmark doubles of a GPU that is only read (the sampler, the process list, the
// cool-down): it reports no power limits and no supported clocks, and has no controls at all, by type.
class ReadingsOnlyGpu : public hw::GpuReadings {
 public:
  std::optional<hw::PowerLimits> power_limits() override { return std::nullopt; }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return {}; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return {}; }
};

}  // namespace wattwise::testing
