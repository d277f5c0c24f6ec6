#include "measure/energy_checks.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "measure/attribution.hpp"
#include "sampling/counter_schedule.hpp"
#include "sampling/trace.hpp"

namespace wattwise::measure {

namespace {

constexpr const char* kAlignmentScale = "alignment-scale";
constexpr const char* kCounterBrackets = "counter-brackets";
constexpr const char* kPowerLimit = "power-limit";
constexpr const char* kPeakPower = "peak-power";
constexpr const char* kPhasesWithinGpu = "phases-within-gpu";

sampling::WindowEnergy gpu_window(const sampling::EnergyAccounting& accountant, bool counter_only, Nanos t0,
                                  Nanos t1) {
  return counter_only ? accountant.counter_only(t0, t1) : accountant.energy(t0, t1);
}

void check_alignment(const sampling::EnergyAccounting& accountant, std::size_t gpu,
                     std::vector<EnergyCheckFailure>& failures) {
  const auto alignment = accountant.alignment();
  if (!alignment || alignment->intervals < 3) return;
  if (alignment->scale >= kMinAlignmentScale && alignment->scale <= kMaxAlignmentScale) return;
  failures.push_back({gpu, kAlignmentScale,
                      fmt::format("its power samples were aligned to the energy counter with a scale of {:.3f} "
                                  "(offset {:.1f} ms, {} counter intervals), where the two agree within {}-{}",
                                  alignment->scale, to_seconds(alignment->offset) * 1000, alignment->intervals,
                                  kMinAlignmentScale, kMaxAlignmentScale)});
}

void check_totals(const Measurement& m, const sampling::EnergyAccounting& accountant, std::size_t gpu,
                  std::vector<EnergyCheckFailure>& failures) {
  const GpuEnergy& g = m.gpu_energy[gpu];
  if (!g.energy_j) return;
  const double energy_j = *g.energy_j;
  const Nanos span = g.covered_until - m.job_start;
  // (A plain double and a flag: GCC 12 sees an optional<double> copied into fmt as maybe uninitialised.)
  double peak_w = 0;
  bool has_peak = false;
  if (gpu < m.traces.size()) {
    if (const auto peak = peak_power_w(m.traces[gpu], m.job_start, g.covered_until)) {
      peak_w = *peak;
      has_peak = true;
    }
  }
  // The most the GPU can draw: its highest limit, else the peak it was seen at (scaled as the samples may
  // read low).
  std::optional<double> ceiling_w = g.power_limit_max_w;
  if (!ceiling_w && has_peak) ceiling_w = peak_w * kMaxAlignmentScale;

  const sampling::CounterBrackets brackets = accountant.brackets(m.job_start, g.covered_until);
  if (ceiling_w && brackets.outer_j) {
    const double slack_j = *ceiling_w * to_seconds(brackets.posting_period);
    const double low_j = std::max(0.0, brackets.inner_j - slack_j), high_j = *brackets.outer_j + slack_j;
    if (energy_j > high_j || energy_j < low_j) {
      failures.push_back({gpu, kCounterBrackets,
                          fmt::format("its energy {:.1f} J lies outside its counter's brackets {:.1f}-{:.1f} J "
                                      "(inner {:.1f} J, outer {:.1f} J, +- one posting at {:.0f} W)",
                                      energy_j, low_j, high_j, brackets.inner_j, *brackets.outer_j, *ceiling_w)});
    }
  }
  if (span <= Nanos{0}) return;
  // Power limits and peaks bound the average beyond doubt only where the figure's own bar cannot explain
  // the excess (a job of a few tenths of a second has edges of a posting each).
  const double lowest_w = std::max(0.0, energy_j - g.energy_uncertainty_j) / to_seconds(span);
  const double avg_w = energy_j / to_seconds(span);
  if (g.power_limit_max_w && lowest_w > *g.power_limit_max_w * kPowerLimitSlack) {
    failures.push_back({gpu, kPowerLimit,
                        fmt::format("its average power {:.1f} W exceeds its highest power limit {:.0f} W", avg_w,
                                    *g.power_limit_max_w)});
  }
  if (has_peak && lowest_w > peak_w * kMaxAlignmentScale) {
    failures.push_back({gpu, kPeakPower,
                        fmt::format("its average power {:.1f} W exceeds the peak it was seen at, {:.1f} W", avg_w,
                                    peak_w)});
  }
}

// A name's occurrences on one GPU that do not overlap sum to no more than the GPU's energy over their span.
void check_phases(const Measurement& m, const sampling::EnergyAccounting& accountant, std::size_t gpu,
                  std::vector<EnergyCheckFailure>& failures) {
  std::map<std::string, std::vector<const PhaseInstance*>> by_name;
  for (const auto& inst : m.phase_instances) {
    if (inst.phase.same_name_depth > 0 || gpu >= inst.energy_per_gpu_j.size()) continue;
    if (inst.energy_per_gpu_j[gpu]) by_name[inst.phase.name].push_back(&inst);
  }
  for (auto& [name, instances] : by_name) {
    std::sort(instances.begin(), instances.end(),
              [](const PhaseInstance* a, const PhaseInstance* b) { return a->phase.begin < b->phase.begin; });
    double sum_j = 0;
    bool overlap = false;
    for (std::size_t k = 0; k < instances.size(); ++k) {
      if (k > 0 && instances[k]->phase.begin < instances[k - 1]->phase.end) overlap = true;
      sum_j += *instances[k]->energy_per_gpu_j[gpu];
    }
    if (overlap) continue;  // ranks side by side on one GPU: their sum may rightly exceed the span's energy
    const Nanos begin = instances.front()->phase.begin, end = instances.back()->phase.end;
    const auto span = gpu_window(accountant, m.gpu_energy[gpu].counter_only, begin, end);
    if (!span.joules) continue;
    const double allowed_j = *span.joules + span.uncertainty_j + 1e-6 * std::max(1.0, *span.joules);
    if (sum_j <= allowed_j) continue;
    failures.push_back({gpu, kPhasesWithinGpu,
                        fmt::format("its {} occurrence(s) of phase '{}' sum to {:.1f} J, more than its {:.1f} J "
                                    "(+-{:.1f}) over their span",
                                    instances.size(), name, sum_j, *span.joules, span.uncertainty_j)});
  }
}

std::string gpu_name(const Measurement& m, std::size_t gpu) {
  return fmt::format("GPU {}", gpu < m.gpus.size() ? m.gpus[gpu].index : gpu);
}

// The sampler's thread did not run when it asked: its counter reads came late, or the reads never bracketed
// postings narrowly enough, while the job ran, to know the grid.
std::string starvation_line(const Measurement& m, std::size_t gpu) {
  const GpuEnergy& g = m.gpu_energy[gpu];
  std::vector<std::string> what;
  if (g.late_counter_reads > 0)
    what.push_back(fmt::format("{} counter read(s) came late (up to {:.0f} ms)", g.late_counter_reads,
                               to_seconds(g.max_counter_read_delay) * 1000));
  if (g.held_up_counter_reads > 0)
    what.push_back(fmt::format("{} counter read(s) were held up inside the driver call (up to {:.0f} ms)",
                               g.held_up_counter_reads, to_seconds(g.max_counter_read_call) * 1000));
  if (g.sample_gaps > 0)
    what.push_back(fmt::format("{} stretch(es) of 20 ms samples were dropped (drained later than the GPU's "
                               "buffer holds)",
                               g.sample_gaps));
  if (!g.grid_learnt) {
    what.push_back(g.grid_known_at ? fmt::format("the counter's posting grid was learnt only {:.2f} s after the "
                                                 "job ended",
                                                 to_seconds(*g.grid_known_at - m.job_end))
                                   : std::string("the counter's posting grid was never learnt"));
  }
  std::string joined;
  for (const auto& part : what) joined += (joined.empty() ? "" : ", ") + part;
  return fmt::format("wattwise: {}: the sampler was starved of CPU: {}; its figures carry wider error bars "
                     "(energy +-{:.1f} J)",
                     gpu_name(m, gpu), joined, g.energy_uncertainty_j);
}

}  // namespace

std::vector<std::string> energy_check_names() {
  return {kAlignmentScale, kCounterBrackets, kPowerLimit, kPeakPower, kPhasesWithinGpu};
}

std::vector<EnergyCheckFailure> check_energy(const Measurement& m,
                                             const std::vector<sampling::EnergyAccounting>& accountants) {
  std::vector<EnergyCheckFailure> failures;
  for (std::size_t i = 0; i < m.gpu_energy.size() && i < accountants.size(); ++i) {
    if (!m.gpu_energy[i].counter_only) check_alignment(accountants[i], i, failures);
    check_totals(m, accountants[i], i, failures);
    check_phases(m, accountants[i], i, failures);
  }
  return failures;
}

std::vector<std::string> account_checked(Measurement& m, bool judge_starvation) {
  if (m.gpu_energy.size() != m.gpus.size()) {
    m.gpu_energy.resize(m.gpus.size());
    for (std::size_t i = 0; i < m.gpus.size(); ++i) m.gpu_energy[i].gpu = m.gpus[i];
  }
  std::vector<sampling::EnergyAccounting> accountants;
  accountants.reserve(m.traces.size());
  for (const auto& trace : m.traces) accountants.emplace_back(trace);
  auto window = [&](std::size_t gpu, Nanos t0, Nanos t1) {
    return gpu_window(accountants.at(gpu), m.gpu_energy.at(gpu).counter_only, t0, t1);
  };
  // The whole run is the counter's increments between its update instants inside the run, plus the two
  // edges (under 100 ms each) cut from the reconciled fine trace; the curve equals the counter at every
  // update, so the figure is the counter's and is labelled so.
  auto total = [&](std::size_t gpu, Nanos t0, Nanos t1) {
    auto e = window(gpu, t0, t1);
    if (e.method == sampling::EnergyMethod::kSamplesReconciled ||
        e.method == sampling::EnergyMethod::kInstantReconciled)
      e.method = sampling::EnergyMethod::kCounter;
    return e;
  };
  m.checks = EnergyChecks{};
  m.checks.checked = energy_check_names();
  attribute_energy(m, total, window);
  std::vector<EnergyCheckFailure> failures = check_energy(m, accountants);
  std::vector<std::string> lines;
  if (!failures.empty()) {
    for (const auto& f : failures) {
      m.gpu_energy[f.gpu].counter_only = true;
      accountants[f.gpu].distrust_fine_trace();
    }
    attribute_energy(m, total, window);
    for (const auto& f : failures) {
      const GpuEnergy& g = m.gpu_energy[f.gpu];
      lines.push_back(fmt::format("wattwise: {}: {}: {}; reported from its energy counter alone instead: {}",
                                  gpu_name(m, f.gpu), f.check, f.detail,
                                  g.energy_j ? fmt::format("{:.1f} +- {:.1f} J", *g.energy_j,
                                                           g.energy_uncertainty_j)
                                             : std::string("no figure (no counter to fall back to)")));
    }
    // The counter alone lies within its own brackets; what fails still is the counter's own word against
    // a limit or a peak: kept as measured, and said.
    for (auto& f : check_energy(m, accountants)) {
      f.detail += " (by the counter alone)";
      lines.push_back(fmt::format("wattwise: {}: {}: {}", gpu_name(m, f.gpu), f.check, f.detail));
      failures.push_back(std::move(f));
    }
  }
  m.checks.failures = std::move(failures);

  if (judge_starvation) {
    for (std::size_t i = 0; i < m.gpu_energy.size() && i < m.traces.size(); ++i) {
      GpuEnergy& g = m.gpu_energy[i];
      const sampling::GpuTrace& trace = m.traces[i];
      g.late_counter_reads = trace.late_counter_reads;
      g.max_counter_read_delay = trace.max_counter_read_delay;
      // A read begun on time may still be held up inside its call (the thread starved mid-call): the
      // trace keeps each call's length, and counts those a long job's coarsening thinned away. Set, not
      // added to, as the fields beside it: accounted again, a measurement keeps its counts.
      const sampling::HeldUpCalls kept = sampling::held_up_calls(trace.energy, 0, trace.energy.size());
      g.held_up_counter_reads = kept.reads + trace.thinned_held_up.reads;
      g.max_counter_read_call = std::max(kept.longest, trace.thinned_held_up.longest);
      // As the accounting reads them: overlapping ones are one stretch.
      g.sample_gaps = sampling::disjoint_sample_gaps(trace.sample_gaps).size();
      g.grid_known_at = accountants[i].grid_known_at();
      // Only a counter that was read (and moved) can have a grid to learn.
      if (trace.energy.size() >= 2 && trace.energy.front().energy_mj != trace.energy.back().energy_mj)
        g.grid_learnt = accountants[i].has_grid() && g.grid_known_at && *g.grid_known_at <= m.job_end;
      // The GPUs learn their grids one after another, each in up to kMaxLearnReads reads kLearnSpacing
      // apart: a job shorter than that may end before its grid is known on an idle CPU too. A grid learnt
      // late says the sampler was starved only for a job that outlasted that time.
      const Nanos learning_time =
          static_cast<Nanos::rep>((i + 1) * sampling::kMaxLearnReads) * sampling::kLearnSpacing;
      g.had_time_to_learn = m.job_end - m.job_start > learning_time;
      if (g.starved()) lines.push_back(starvation_line(m, i));
    }
  }
  return lines;
}

}  // namespace wattwise::measure
