#pragma once

#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "measure/job_gpus.hpp"

namespace wattwise::cli {

// Positions (into GpuSystem) of the GPUs named by `--gpus`: a comma list of indices or UUIDs; "all" (the
// default) selects every GPU. "" or a name that matches no GPU is a usage error that lists the GPUs present.
std::vector<std::size_t> select_gpus(hw::GpuSystem& system, const std::string& list);

// What select_job_gpus needs: --gpus resolved if given, and CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER from
// wattwise's own environment (the job inherits it) unless `simulated` (a simulated job uses no CUDA).
measure::JobGpuRequest job_gpu_request(hw::GpuSystem& system, const std::optional<std::string>& gpus_flag,
                                       const std::string& other_gpus, bool simulated);

}  // namespace wattwise::cli
