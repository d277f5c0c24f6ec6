#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "plan/plan.hpp"

namespace wattwise::safety {

// `--dry-run`: every run of the plan with its settings, then every change the sweep would make per GPU
// (from -> to, the restore at the end included). Only reads the GPUs: no journal, no lock, no database.
std::string describe_dry_run(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                             const plan::Plan& plan);

}  // namespace wattwise::safety
