#include "cli/gpu_selection.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::cli {

std::vector<std::size_t> select_gpus(hw::GpuSystem& system, const std::string& list) {
  std::vector<std::size_t> positions;
  if (list.empty())
    throw usage_error(fmt::format("--gpus '' names no GPU: give indices or UUIDs (present: {}), or all",
                                  measure::present_gpus(system)));
  if (list == "all") {
    for (std::size_t i = 0; i < system.count(); ++i) positions.push_back(i);
    if (positions.empty())
      throw environment_error("no GPU found: check `nvidia-smi`");
    return positions;
  }
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    std::optional<std::size_t> found;
    for (std::size_t i = 0; i < system.count(); ++i) {
      const auto& id = system.gpu(i).identity();
      if (item == std::to_string(id.index) || item == id.uuid) found = i;
    }
    if (!found)
      throw usage_error(fmt::format("--gpus: no GPU '{}' on this machine; present: {}", item,
                                    measure::present_gpus(system)));
    if (std::find(positions.begin(), positions.end(), *found) == positions.end()) positions.push_back(*found);
  }
  return positions;
}

measure::JobGpuRequest job_gpu_request(hw::GpuSystem& system, const std::optional<std::string>& gpus_flag,
                                       const std::string& other_gpus, bool simulated) {
  measure::JobGpuRequest request;
  request.other_gpus = measure::parse_other_gpus(other_gpus);
  if (gpus_flag) request.gpus_flag = select_gpus(system, *gpus_flag);
  if (simulated) return request;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) request.cuda_visible_devices = visible;
  if (const char* order = std::getenv("CUDA_DEVICE_ORDER")) request.cuda_device_order = order;
  return request;
}

}  // namespace wattwise::cli
