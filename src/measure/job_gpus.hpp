#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu.hpp"

// Which GPUs are the job's, and which are sampled: from --gpus, else CUDA_VISIBLE_DEVICES, else all.
//
//   --gpus LIST given       the listed GPUs are measured and all are the job's (CUDA_VISIBLE_DEVICES is not
//                           read for the selection; the job still gets it unchanged)
//   CUDA_VISIBLE_DEVICES    the GPUs it names (in its order) are the job's; the others are left out, or with
//                           --other-gpus report sampled after them and reported as not the job's
//   neither                 every GPU is measured and the job's
// --job-gpus N then overrides: the job's GPUs are the first N measured ones.
namespace wattwise::measure {

enum class OtherGpus {
  kOmit,    // not sampled: on a shared node they are other people's jobs, and reading them costs CPU
  kReport,  // sampled and reported separately, never summed into the job's energy
};

// "omit" or "report"; anything else is a usage error naming the flag.
OtherGpus parse_other_gpus(const std::string& text);

// "0 (GPU-...), 1 (GPU-...)", or "none": the GPUs present, for error lines that name what to give instead.
std::string present_gpus(hw::GpuSystem& system);

struct JobGpuRequest {
  std::optional<std::vector<std::size_t>> gpus_flag;  // positions named by --gpus; absent: not given
  std::optional<std::string> cuda_visible_devices;    // the variable's value; absent: unset
  std::optional<std::string> cuda_device_order;
  OtherGpus other_gpus = OtherGpus::kOmit;
};

struct JobGpuSelection {
  std::vector<std::size_t> positions;  // the GPUs to sample: the job's first
  std::size_t job_gpu_count = 0;       // the first this many of `positions` are the job's
  std::vector<bool> via_mig;           // per position: named through a MIG device (energy is the whole GPU's)
  std::string source;                  // "--gpus", "CUDA_VISIBLE_DEVICES" or "all"
  std::vector<std::string> warnings;   // for stderr, one line each, without the "wattwise: " prefix
};

// Throws usage_error when CUDA_VISIBLE_DEVICES is set but gives the job no GPU of this machine (empty, or its
// first entry names none), saying what to do; a later bad entry is a warning (CUDA ignores it and the rest).
JobGpuSelection select_job_gpus(hw::GpuSystem& system, const JobGpuRequest& request);

}  // namespace wattwise::measure
