#include "window/window_energy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sampling/live_energy.hpp"

namespace wattwise::window {

std::vector<std::size_t> window_gpus(const WindowRequest& request, std::size_t job_gpu_count) {
  if (request.rank && static_cast<std::size_t>(*request.rank) < job_gpu_count)
    return {static_cast<std::size_t>(*request.rank)};
  std::vector<std::size_t> all(job_gpu_count);
  for (std::size_t k = 0; k < job_gpu_count; ++k) all[k] = k;
  return all;
}

std::optional<WindowAnswer> answer_window(const std::vector<sampling::GpuTrace>& job_traces,
                                          const WindowRequest& request) {
  const auto gpus = window_gpus(request, job_traces.size());
  if (gpus.empty()) return WindowAnswer::unavailable("wattwise measures no GPU of this job");
  const bool covered = std::all_of(
      gpus.begin(), gpus.end(), [&](std::size_t k) { return sampling::covers(job_traces[k], request.end); });
  if (!covered) return std::nullopt;
  WindowAnswer answer;
  answer.status = WindowAnswer::Status::kOk;
  answer.duration_s = to_seconds(request.end - request.begin);
  for (std::size_t k : gpus) {
    const sampling::GpuTrace& trace = job_traces[k];
    // One GPU at a time, so that the answer has each GPU's share as well as the sum.
    const auto resolved = sampling::resolve_windows({trace}, {{request.begin, request.end}});
    if (resolved.empty() || !resolved.front().joules)
      return WindowAnswer::unavailable(
          fmt::format("no reading of GPU {} covers the window{}", trace.gpu_index,
                      trace.failure ? fmt::format(" (it failed: {})", trace.failure->error) : std::string()));
    answer.energy_j += *resolved.front().joules;
    answer.gpus.push_back({trace.gpu_index, *resolved.front().joules});
    if (answer.method.empty()) answer.method = sampling::to_string(resolved.front().method);
  }
  return answer;
}

std::optional<WindowAnswer> LiveWindows::answer(const WindowRequest& request) const {
  // The job cannot have marked anything before it was started; such a window would only make the copy long.
  if (request.begin < job_start_)
    return WindowAnswer::unavailable("the window begins before wattwise started the job");
  // First only the readings past the window's end (a short copy): a window whose readings are not in yet is
  // asked again every few ms, and must not copy its whole length under the sampler's lock each time.
  const std::vector<sampling::GpuTrace> tail = sampler_.snapshot_since(request.end);
  for (std::size_t k : window_gpus(request, job_gpus_.size()))
    if (!sampling::covers(tail.at(job_gpus_[k]), request.end)) return std::nullopt;
  std::vector<sampling::GpuTrace> all = sampler_.snapshot_since(request.begin - sampling::kHistoryBefore);
  std::vector<sampling::GpuTrace> job;
  job.reserve(job_gpus_.size());
  for (std::size_t position : job_gpus_) job.push_back(std::move(all.at(position)));
  return answer_window(job, request);
}

}  // namespace wattwise::window
