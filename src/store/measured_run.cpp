#include "store/measured_run.hpp"

#include <fmt/format.h>

#include <cstring>

#include "hw/node_source.hpp"
#include "sampling/trace.hpp"

namespace wattwise::store {
namespace {

// Empty when the job succeeded; otherwise what went wrong, for the database's `error` column.
std::string failure_of(const measure::JobOutcome& outcome) {
  if (outcome.timed_out) return fmt::format("timed out (exit status {})", outcome.exit_code);
  if (outcome.signal)
    return fmt::format("killed by signal {} ({})", *outcome.signal, ::strsignal(*outcome.signal));
  if (outcome.exit_code != 0) return fmt::format("exit status {}", outcome.exit_code);
  return "";
}

}  // namespace

RunRecord planned_run_record(const plan::PlannedRun& run, const std::string& started_at,
                             const std::string& ended_at, int exit_status) {
  RunRecord r;
  r.plan_index = run.index;
  r.settings = run.settings;
  r.repeat = run.repeat;
  r.warmup = run.warmup;
  r.started_at = started_at;
  r.ended_at = ended_at;
  r.exit_status = exit_status;
  return r;
}

RunRecord record_of(const plan::PlannedRun& run, const measure::Measurement& m,
                    const std::vector<GpuRunEnergy>& read_back, const std::string& started_at,
                    const std::string& ended_at) {
  RunRecord r = planned_run_record(run, started_at, ended_at, m.outcome.exit_code);
  for (const auto& [stream, kept] : {std::pair{"stdout", &m.job_stdout}, std::pair{"stderr", &m.job_stderr}})
    if (*kept) r.output.push_back({stream, (*kept)->tail, (*kept)->bytes, (*kept)->truncated()});
  r.time_s = m.wall_s();
  r.energy_j = m.total_energy_j();
  if (r.energy_j) r.energy_uncertainty_j = m.total_energy_uncertainty_j();
  r.error = failure_of(m.outcome);
  // A GPU that failed during the run makes it a failed run: its figures are partial. The next run's
  // settings or read-back then fail on that GPU, which stops the sweep and restores the others.
  for (const auto& e : m.gpu_energy) {
    if (!e.failure) continue;
    r.error += fmt::format("{}GPU {} {} at {:.1f} s: {}", r.error.empty() ? "" : "; ", e.gpu.index,
                           e.failure->gpu_lost ? "lost" : "failed", to_seconds(e.failure->at - m.job_start),
                           e.failure->error);
  }
  for (const auto& e : m.gpu_energy) {
    if (e.used_by_job && r.method.empty()) r.method = sampling::to_string(e.method);
    GpuRunEnergy g;
    g.gpu_index = e.gpu.index;
    for (const auto& rb : read_back) {
      if (rb.gpu_index == e.gpu.index) g = rb;
    }
    g.energy_j = e.energy_j;
    g.avg_power_w = e.avg_power_w;
    g.peak_power_w = e.peak_power_w;
    g.method = sampling::to_string(e.method);
    r.gpus.push_back(g);
  }
  for (const auto& u : m.gpu_usage)
    r.gpu_usage.push_back({u.gpu.index, u.gpu.uuid, u.expected, u.measured, u.job_seen, u.pids});
  if (m.node) {
    for (const auto& n : m.node->sources)
      r.node.push_back({n.name, hw::to_string(n.kind), n.origin, n.energy_j, n.avg_power_w});
  }
  for (const auto& p : m.phase_summaries) {
    // The work of the run: the phase that counted the most samples (an epoch counts all of them, iterations
    // only the ones that were marked).
    if (p.samples && (!r.work || *p.samples > *r.work)) r.work = p.samples;
    PhaseResult phase;
    phase.name = p.name;
    phase.count = static_cast<unsigned>(p.count);
    phase.time_s = p.time_s;
    phase.energy_j = p.energy_j;
    if (p.energy_j) phase.energy_uncertainty_j = p.uncertainty_j;
    phase.method = sampling::to_string(p.method);
    r.phases.push_back(phase);
    r.phase_node.push_back({p.name, p.node});
  }
  return r;
}

}  // namespace wattwise::store
