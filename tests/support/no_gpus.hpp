#pragma once

// A node without GPUs (hw::GpuSystem with none): for the code that must work with only a job, its markers
// and its watchers, as measure does where no GPU is present.

#include <cstddef>
#include <stdexcept>
#include <string>

#include "hw/gpu.hpp"

namespace wattwise::testing {

class NoGpus final : public hw::GpuSystem {
 public:
  std::string driver_version() override { return "n/a"; }
  std::string backend() const override { return "none"; }
  std::size_t count() const override { return 0; }
  hw::GpuReadings& gpu(std::size_t) override { throw std::out_of_range("no GPUs"); }
};

}  // namespace wattwise::testing
