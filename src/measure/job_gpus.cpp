#include "measure/job_gpus.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hw/cuda_visible_devices.hpp"

namespace wattwise::measure {

std::string present_gpus(hw::GpuSystem& system) {
  std::string out;
  for (std::size_t i = 0; i < system.count(); ++i)
    out += fmt::format("{}{} ({})", i ? ", " : "", system.gpu(i).identity().index,
                       system.gpu(i).identity().uuid);
  return out.empty() ? "none" : out;
}

namespace {

JobGpuSelection all_gpus(std::vector<std::size_t> positions, std::string source) {
  JobGpuSelection s;
  s.positions = std::move(positions);
  s.job_gpu_count = s.positions.size();
  s.via_mig.assign(s.positions.size(), false);
  s.source = std::move(source);
  if (s.positions.empty())
    throw environment_error("no GPU found: check `nvidia-smi`, or use --simulate GPU:MODEL");
  return s;
}

JobGpuSelection from_cuda_visible_devices(hw::GpuSystem& system, const JobGpuRequest& request) {
  const std::string& value = *request.cuda_visible_devices;
  std::vector<hw::VisibleCandidate> candidates;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < system.count(); ++i) {
    const auto& id = system.gpu(i).identity();
    candidates.push_back({id.index, id.uuid, {}});
    names.push_back(id.name);
  }
  const auto resolved = hw::resolve_cuda_visible_devices(value, candidates);
  if (resolved.gpus.empty() && !resolved.stopped_at)
    throw usage_error(
        "CUDA_VISIBLE_DEVICES is set but empty: the job sees no GPU, so there is nothing to measure; unset "
        "it "
        "or give --gpus");
  if (resolved.gpus.empty())
    throw usage_error(fmt::format(
        "CUDA_VISIBLE_DEVICES='{}': '{}' {}, so CUDA would give the job no GPU (present: {}); fix the "
        "variable or give --gpus",
        value, *resolved.stopped_at, resolved.stop_reason, present_gpus(system)));

  JobGpuSelection s;
  s.source = "CUDA_VISIBLE_DEVICES";
  for (const auto& g : resolved.gpus) {
    s.positions.push_back(g.position);
    s.via_mig.push_back(g.mig);
  }
  s.job_gpu_count = s.positions.size();
  if (resolved.stopped_at)
    s.warnings.push_back(fmt::format(
        "warning: CUDA_VISIBLE_DEVICES='{}': '{}' {}; CUDA ignores it and every entry after it, so the job's "
        "GPUs are {} (present: {})",
        value, *resolved.stopped_at, resolved.stop_reason, s.positions.size(), present_gpus(system)));
  if (auto w = hw::device_order_warning(resolved, request.cuda_device_order, names))
    s.warnings.push_back("warning: " + *w);
  if (std::find(s.via_mig.begin(), s.via_mig.end(), true) != s.via_mig.end())
    s.warnings.push_back(
        "note: the job runs on MIG devices: NVML measures energy per GPU, so the energy shown is the whole "
        "GPU's, other MIG instances' included");
  if (request.other_gpus == OtherGpus::kReport)
    for (std::size_t i = 0; i < system.count(); ++i)
      if (std::find(s.positions.begin(), s.positions.end(), i) == s.positions.end()) {
        s.positions.push_back(i);
        s.via_mig.push_back(false);
      }
  return s;
}

}  // namespace

OtherGpus parse_other_gpus(const std::string& text) {
  if (text == "omit") return OtherGpus::kOmit;
  if (text == "report") return OtherGpus::kReport;
  throw usage_error(fmt::format("--other-gpus '{}': give omit (the default) or report", text));
}

JobGpuSelection select_job_gpus(hw::GpuSystem& system, const JobGpuRequest& request) {
  if (request.gpus_flag) return all_gpus(*request.gpus_flag, "--gpus");
  if (request.cuda_visible_devices) return from_cuda_visible_devices(system, request);
  std::vector<std::size_t> every;
  for (std::size_t i = 0; i < system.count(); ++i) every.push_back(i);
  return all_gpus(every, "all");
}

}  // namespace wattwise::measure
