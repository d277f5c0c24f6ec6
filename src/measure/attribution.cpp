#include "measure/attribution.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace wattwise::measure {

namespace {

std::vector<std::size_t> gpus_of_phase(const workload::Phase& phase,
                                       const std::vector<std::size_t>& job_gpus) {
  if (phase.rank && *phase.rank >= 0 && static_cast<std::size_t>(*phase.rank) < job_gpus.size())
    return {job_gpus[static_cast<std::size_t>(*phase.rank)]};
  return job_gpus;
}

// How far a failed GPU's trace reaches: its last counter read, else its finest power reading.
Nanos covered_until(const sampling::GpuTrace& trace) {
  if (!trace.energy.empty()) return trace.energy.back().t;
  Nanos last{0};
  for (const auto* readings : {&trace.power_samples, &trace.power_instant, &trace.power_average})
    if (!readings->empty()) last = std::max(last, readings->back().t);
  return last;
}

std::optional<double> counter_sum(const std::map<std::string, double>& counters, const std::string& key) {
  auto it = counters.find(key);
  if (it == counters.end()) return std::nullopt;
  return it->second;
}

void add_optional(std::optional<double>& sum, std::optional<double> value) {
  if (value) sum = sum.value_or(0) + *value;
}

}  // namespace

std::optional<double> PhaseSummary::j_per_sample() const {
  if (!energy_j || !samples || *samples <= 0) return std::nullopt;
  return *energy_j / *samples;
}

std::optional<double> PhaseSummary::gflops_per_w() const {
  // GFLOP/s per W = GFLOP per J.
  if (!energy_j || !flops || *energy_j <= 0) return std::nullopt;
  return *flops / 1e9 / *energy_j;
}

std::optional<double> Measurement::total_energy_j() const {
  std::optional<double> sum;
  for (const auto& g : gpu_energy) {
    if (!g.used_by_job) continue;
    if (!g.energy_j) return std::nullopt;
    sum = sum.value_or(0) + *g.energy_j;
  }
  return sum;
}

double Measurement::total_energy_uncertainty_j() const {
  double sum = 0;
  for (const auto& g : gpu_energy)
    if (g.used_by_job) sum += g.energy_uncertainty_j;
  return sum;
}

bool GpuEnergy::starved() const {
  return late_counter_reads > 0 || held_up_counter_reads > 0 || sample_gaps > 0 || (!grid_learnt && had_time_to_learn);
}

bool Measurement::complete() const {
  return std::all_of(gpu_energy.begin(), gpu_energy.end(), [](const GpuEnergy& g) { return g.complete(); });
}

std::set<std::string> Measurement::unanswering_gpus() const {
  std::set<std::string> uuids;
  for (const auto& g : gpu_energy)
    if (g.failure && g.failure->hung) uuids.insert(g.gpu.uuid);
  return uuids;
}

std::optional<double> peak_power_w(const sampling::GpuTrace& trace, Nanos t0, Nanos t1) {
  const auto& finest = !trace.power_samples.empty() ? trace.power_samples : trace.power_instant;
  std::optional<double> peak = trace.coarsened_peak_w;
  for (const auto& r : finest)
    if (r.t >= t0 && r.t <= t1) peak = std::max(peak.value_or(r.power_w), r.power_w);
  return peak;
}

std::vector<std::size_t> job_gpu_positions_of(const std::vector<GpuEnergy>& gpus) {
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i].used_by_job) positions.push_back(i);
  return positions;
}

PhaseInstance account_phase(const workload::Phase& phase, std::size_t gpu_count,
                            const std::vector<std::size_t>& job_gpus,
                            const std::function<bool(std::size_t, Nanos)>& covered, const WindowEnergyFn& window) {
  PhaseInstance inst;
  inst.phase = phase;
  inst.energy_per_gpu_j.assign(gpu_count, std::nullopt);
  inst.uncertainty_per_gpu_j.assign(gpu_count, 0.0);
  inst.pieces_per_gpu.assign(gpu_count, std::nullopt);
  bool complete = true;
  for (std::size_t pos : gpus_of_phase(phase, job_gpus)) {
    // A phase that ran on past a GPU's failure has no figure there: part of it was never measured.
    const auto e = covered(pos, phase.end) ? window(pos, phase.begin, phase.end) : sampling::WindowEnergy{};
    inst.energy_per_gpu_j[pos] = e.joules;
    if (!e.joules) complete = false;
    add_optional(inst.energy_j, e.joules);
    if (e.joules) {
      inst.uncertainty_j += e.uncertainty_j;
      inst.uncertainty_per_gpu_j[pos] = e.uncertainty_j;
      inst.pieces_per_gpu[pos] = e.pieces;
    }
    if (inst.method == sampling::EnergyMethod::kNone) inst.method = e.method;
  }
  if (!complete) {
    inst.energy_j.reset();
    inst.uncertainty_j = 0;
  }
  return inst;
}

void SummedBar::add(const PhaseInstance& inst) {
  if (inst.uncertainty_per_gpu_j.empty()) {
    // Made without per-GPU bars (a hand-built occurrence): its whole bar as one GPU's, sharing nothing.
    if (per_gpu_.empty()) per_gpu_.resize(1);
    Chain& chain = per_gpu_[0];
    chain.closed_sq += chain.open_j * chain.open_j;
    chain.open_j = inst.uncertainty_j;
    chain.open_until.reset();
    return;
  }
  if (per_gpu_.size() < inst.uncertainty_per_gpu_j.size()) per_gpu_.resize(inst.uncertainty_per_gpu_j.size());
  for (std::size_t g = 0; g < inst.uncertainty_per_gpu_j.size(); ++g) {
    if (!inst.energy_per_gpu_j[g]) continue;
    Chain& chain = per_gpu_[g];
    const double bar = inst.uncertainty_per_gpu_j[g];
    const auto& pieces = g < inst.pieces_per_gpu.size() ? inst.pieces_per_gpu[g] : std::nullopt;
    if (pieces && chain.open_until && pieces->first <= *chain.open_until) {
      chain.open_j += bar;
      chain.open_until = std::max(*chain.open_until, pieces->second);
    } else {
      chain.closed_sq += chain.open_j * chain.open_j;
      chain.open_j = bar;
      chain.open_until = pieces ? std::optional<Nanos>(pieces->second) : std::nullopt;
    }
  }
}

double SummedBar::joules() const {
  double sum = 0;
  for (const Chain& chain : per_gpu_) sum += std::sqrt(chain.closed_sq + chain.open_j * chain.open_j);
  return sum;
}

void PhaseTotals::add(const PhaseInstance& inst) {
  const workload::Phase& phase = inst.phase;
  auto [it, inserted] = by_name.try_emplace(phase.name);
  auto& s = it->second;
  if (inserted) {
    s.name = phase.name;
    s.energy_j = 0.0;
    order.push_back(phase.name);
  }
  ++s.count;
  // Ranks run side by side: a phase's time is the longest total of any one rank, not their sum.
  auto& rank = per_rank[{phase.name, phase.rank.value_or(-1)}];
  ++rank.count;
  rank.time_s += to_seconds(phase.end - phase.begin);
  if (rank.energy_j && inst.energy_j) {
    *rank.energy_j += *inst.energy_j;
    rank.bar.add(inst);
  } else {
    rank.energy_j.reset();
  }
  s.time_s = std::max(s.time_s, rank.time_s);
  if (s.energy_j && inst.energy_j) {
    *s.energy_j += *inst.energy_j;
    s.bar.add(inst);
    s.uncertainty_j = s.bar.joules();
  } else {
    s.energy_j.reset();
    s.uncertainty_j = 0;
  }
  if (s.method == sampling::EnergyMethod::kNone) s.method = inst.method;
  if (inst.energy_j) s.energy_per_occurrence.add(*inst.energy_j);
  s.time_per_occurrence.add(to_seconds(phase.end - phase.begin));
  add_optional(s.samples, counter_sum(phase.counters, "samples"));
  add_optional(s.flops, counter_sum(phase.counters, "flops"));
}

void attribute_energy(Measurement& m, const WindowEnergyFn& total, const WindowEnergyFn& window) {
  if (m.gpu_energy.size() != m.gpus.size()) {
    m.gpu_energy.resize(m.gpus.size());
    for (std::size_t i = 0; i < m.gpus.size(); ++i) m.gpu_energy[i].gpu = m.gpus[i];
  }
  for (std::size_t i = 0; i < m.gpus.size(); ++i) {
    auto& g = m.gpu_energy[i];
    g.covered_until = m.job_end;
    if (i < m.traces.size()) {
      const sampling::GpuTrace& trace = m.traces[i];
      g.failure = trace.failure;
      g.failed_readings = trace.failed_readings;
      if (g.failure) g.covered_until = std::clamp(covered_until(trace), m.job_start, m.job_end);
    }
    const bool nothing_covered = g.failure && g.covered_until <= m.job_start;
    const auto e = nothing_covered ? sampling::WindowEnergy{} : total(i, m.job_start, g.covered_until);
    g.energy_j = e.joules;
    g.energy_uncertainty_j = e.joules ? e.uncertainty_j : 0;
    g.method = e.method;
    const double covered_s = to_seconds(g.covered_until - m.job_start);
    g.avg_power_w = (e.joules && covered_s > 0) ? std::optional<double>(*e.joules / covered_s) : std::nullopt;
    g.peak_power_w =
        i < m.traces.size() ? peak_power_w(m.traces[i], m.job_start, g.covered_until) : std::nullopt;
  }

  const auto job_gpus = job_gpu_positions_of(m.gpu_energy);
  m.phase_instances.clear();
  // A long job's phases folded while it ran (phase_folding.hpp) are the totals' start, and a sample of their
  // occurrences comes first in the list.
  PhaseTotals totals = m.folded ? m.folded->totals : PhaseTotals{};
  if (m.folded) m.phase_instances = m.folded->sample;
  const auto covered = [&](std::size_t pos, Nanos end) {
    return m.gpu_energy[pos].complete() || end <= m.gpu_energy[pos].covered_until;
  };
  for (const auto& phase : m.phases) {
    PhaseInstance inst = account_phase(phase, m.gpus.size(), job_gpus, covered, window);
    // A phase nested in one of the same name (a "step" inside a "step") is listed as an occurrence but not
    // added to the name's totals: its time and energy are already inside the outermost one's.
    if (phase.same_name_depth == 0) totals.add(inst);
    m.phase_instances.push_back(std::move(inst));
  }
  m.phase_summaries.clear();
  for (const auto& name : totals.order) {
    PhaseSummary& s = totals.by_name[name];
    // Folded occurrences are no longer in `phases`: the node over the name's spans is unknown.
    s.node.gpus_j = 0.0;
    if (m.folded && m.folded->totals.by_name.contains(name)) s.node.gpus_j.reset();
    for (const auto& [begin, end] : phase_spans(m.phases, name)) {
      for (std::size_t pos = 0; pos < m.gpus.size() && s.node.gpus_j; ++pos) {
        const bool covered = m.gpu_energy[pos].complete() || end <= m.gpu_energy[pos].covered_until;
        const auto e = covered ? window(pos, begin, end) : sampling::WindowEnergy{};
        if (e.joules) {
          *s.node.gpus_j += *e.joules;
        } else {
          s.node.gpus_j.reset();
        }
      }
    }
    m.phase_summaries.push_back(s);
  }
  m.phase_rank_uncertainty_j.clear();
  for (const auto& [key, rank] : totals.per_rank)
    if (rank.energy_j) m.phase_rank_uncertainty_j[key] = rank.bar.joules();
}

std::vector<std::pair<Nanos, Nanos>> phase_spans(const std::vector<workload::Phase>& phases,
                                                 const std::string& name) {
  std::vector<std::pair<Nanos, Nanos>> spans;
  for (const auto& phase : phases)
    if (phase.name == name && phase.same_name_depth == 0 && phase.end > phase.begin)
      spans.emplace_back(phase.begin, phase.end);
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<Nanos, Nanos>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) {
      merged.back().second = std::max(merged.back().second, span.second);
    } else {
      merged.push_back(span);
    }
  }
  return merged;
}

}  // namespace wattwise::measure
