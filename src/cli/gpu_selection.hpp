#pragma once

#include <string>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::cli {

// Positions (into GpuSystem) of the GPUs named by `--gpus`: a comma list of indices or UUIDs; "all" (the
// default) selects every GPU. "" or a name that matches no GPU is a usage error that lists the GPUs present.
std::vector<std::size_t> select_gpus(hw::GpuSystem& system, const std::string& list);

}  // namespace wattwise::cli
