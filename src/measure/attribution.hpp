#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "measure/measurement.hpp"

namespace wattwise::measure {

// Energy of GPU number `gpu_position` (index into Measurement::gpus) over [t0, t1].
using WindowEnergyFn = std::function<sampling::WindowEnergy(std::size_t gpu_position, Nanos t0, Nanos t1)>;

// The positions (in Measurement::gpus) of the GPUs the job ran on, in order: rank r ran on the r-th of them.
std::vector<std::size_t> job_gpu_positions_of(const std::vector<GpuEnergy>& gpus);

// One occurrence's energy: on the GPU of its rank, else on every job GPU; `covered(pos, end)` says whether
// GPU `pos` was still measured at `end` (else that GPU, and so the occurrence, has no figure).
PhaseInstance account_phase(const workload::Phase& phase, std::size_t gpu_count,
                            const std::vector<std::size_t>& job_gpus,
                            const std::function<bool(std::size_t, Nanos)>& covered, const WindowEnergyFn& window);

// Fills gpu_energy, phase_instances and phase_summaries of `m` from its traces and phases.
// `total` measures long windows (the whole run: the counter), `window` short ones (phases: the finest trace
// reconciled with the counter). A phase that names a rank is charged to the GPU that rank ran on (rank r ->
// the r-th GPU the job used); a phase without a rank is charged to every GPU the job used, so no GPU is
// counted twice for one phase and idle GPUs are never charged with the job's phases. Each phase summary's
// node.gpus_j is every measured GPU's energy over phase_spans (absent if any GPU's is).
void attribute_energy(Measurement& m, const WindowEnergyFn& total, const WindowEnergyFn& window);

// The spans of the job's time in phase `name`: its outermost occurrences (nested ones of the same name lie
// inside), the ranks' overlapping spans merged, in time order. The node's energy over a phase is taken over
// these, so a node-wide figure never counts the same second twice.
std::vector<std::pair<Nanos, Nanos>> phase_spans(const std::vector<workload::Phase>& phases,
                                                 const std::string& name);

// The peak of the finest power trace inside [t0, t1], if any.
std::optional<double> peak_power_w(const sampling::GpuTrace& trace, Nanos t0, Nanos t1);

}  // namespace wattwise::measure
