#include "sampling/live_energy.hpp"

#include <algorithm>

#include "sampling/energy_accounting.hpp"

namespace wattwise::sampling {

namespace {

bool has_fine_trace(const GpuTrace& trace) {
  return !trace.power_samples.empty() || !trace.power_instant.empty() || !trace.power_average.empty();
}

// What an iteration's energy is cut from: the fine trace alone where there is one (see the header: the
// counter's knots cannot be placed on a short copy of the readings), else the counter.
GpuTrace fine_only(GpuTrace trace) {
  if (has_fine_trace(trace)) trace.energy.clear();
  return trace;
}

}  // namespace

bool covers(const GpuTrace& trace, Nanos end) {
  // A failed GPU will not be read again: its windows are answered now (without its energy, or with what
  // its readings before the failure say).
  if (trace.failure) return true;
  if (!trace.power_samples.empty()) return trace.power_samples.back().t >= end;
  if (!trace.power_instant.empty()) return trace.power_instant.back().t >= end;
  if (!trace.power_average.empty()) return trace.power_average.back().t >= end;
  return !trace.energy.empty() && trace.energy.back().t >= end + kCounterPastEnd;
}

std::vector<ResolvedEnergy> resolve_windows(const std::vector<GpuTrace>& traces,
                                            const std::vector<EnergyWindow>& windows) {
  std::size_t covered = 0;
  while (covered < windows.size() && std::all_of(traces.begin(), traces.end(), [&](const GpuTrace& t) {
           return covers(t, windows[covered].end);
         }))
    ++covered;
  std::vector<ResolvedEnergy> resolved(covered);
  if (covered == 0) return resolved;
  std::vector<EnergyAccounting> accountants;
  accountants.reserve(traces.size());
  for (const auto& trace : traces) accountants.emplace_back(fine_only(trace));
  for (std::size_t w = 0; w < covered; ++w) {
    double sum_j = 0;
    bool known = !accountants.empty();
    for (const auto& accountant : accountants) {
      const WindowEnergy e = accountant.energy(windows[w].begin, windows[w].end);
      if (!e.joules) known = false;
      sum_j += e.joules.value_or(0);
      if (resolved[w].method == EnergyMethod::kNone) resolved[w].method = e.method;
    }
    if (known) resolved[w].joules = sum_j;
  }
  return resolved;
}

std::vector<ResolvedEnergy> LiveEnergy::resolve(const std::vector<EnergyWindow>& windows) const {
  if (windows.empty()) return {};
  std::vector<GpuTrace> all = sampler_.snapshot_since(windows.front().begin - kHistoryBefore);
  std::vector<GpuTrace> job;
  for (std::size_t position : job_gpus_) job.push_back(std::move(all.at(position)));
  return resolve_windows(job, windows);
}

}  // namespace wattwise::sampling
