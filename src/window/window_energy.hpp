#pragma once

// The energy of a window a running job asks for, from the sampler's readings so far: the same live energy
// that `wattwise tune` cuts each iteration from (sampling/live_energy.hpp), per GPU. So it is the 20 ms samples
// (else the instantaneous power) integrated over the window, not yet reconciled to the energy counter as
// the phase instance in the final summary is (docs/windows.md says by how much the two may differ).
//
// A window is answered once every one of its GPUs' readings covers its end (sampling::covers): for the samples
// that is the next drain after the end (every 0.5 s by default), so an answer waits for the readings rather
// than guessing at the energy still in the driver's buffer.

#include <cstddef>
#include <optional>
#include <vector>

#include "sampling/sampler.hpp"
#include "sampling/trace.hpp"
#include "window/window_protocol.hpp"

namespace wattwise::window {

// The GPUs a window's energy is summed over, as positions in `job_gpus`' order: a rank that names one of
// the job's GPUs picks it (as a marker's rank does in the final attribution), otherwise all of them.
std::vector<std::size_t> window_gpus(const WindowRequest& request, std::size_t job_gpu_count);

// The answer from the job GPUs' traces (one per job GPU, in the job's order); nullopt while some trace of the
// window's GPUs does not cover its end yet.
std::optional<WindowAnswer> answer_window(const std::vector<sampling::GpuTrace>& job_traces,
                                          const WindowRequest& request);

// answer_window over a copy of the sampler's readings taken now (Sampler::snapshot_since, safe while the
// sampler runs: it holds the sampler's lock only while copying).
class LiveWindows {
 public:
  LiveWindows(const sampling::Sampler& sampler, std::vector<std::size_t> job_gpus, Nanos job_start)
      : sampler_(sampler), job_gpus_(std::move(job_gpus)), job_start_(job_start) {}
  std::optional<WindowAnswer> answer(const WindowRequest& request) const;

 private:
  const sampling::Sampler& sampler_;
  std::vector<std::size_t> job_gpus_;
  Nanos job_start_;
};

}  // namespace wattwise::window
