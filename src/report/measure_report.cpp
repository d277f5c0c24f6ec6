#include "report/measure_report.hpp"

#include <fmt/format.h>

#include "core/text.hpp"
#include "report/footprint_report.hpp"
#include "report/node_report.hpp"
#include "report/phase_instances_json.hpp"
#include "report/sampler_cost_report.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    out += arg.find_first_of(" \t'\"") == std::string::npos ? arg : "'" + arg + "'";
  }
  return out;
}

std::string outcome_text(const measure::JobOutcome& o) {
  if (o.timed_out) return fmt::format("{} (timed out)", o.exit_code);
  if (o.signal) return fmt::format("{} (killed by signal {})", o.exit_code, *o.signal);
  return std::to_string(o.exit_code);
}

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string gpu_label(const measure::GpuEnergy& g, const std::vector<measure::GpuUsage>& usage) {
  if (g.used_by_job) return std::to_string(g.gpu.index) + (g.via_mig ? " (MIG: whole GPU)" : "");
  for (const auto& u : usage)
    if (u.gpu.uuid == g.gpu.uuid && u.job_seen == true)
      return std::to_string(g.gpu.index) + " (not given; job seen)";
  return std::to_string(g.gpu.index) + " (idle)";
}

std::string gpu_list(const std::vector<const measure::GpuUsage*>& gpus) {
  std::string out;
  for (const auto* u : gpus) out += fmt::format("{}GPU {}", out.empty() ? "" : ", ", u->gpu.index);
  return out;
}

}  // namespace

std::string gpu_usage_lines(const measure::Measurement& m) {
  if (m.gpu_usage.empty()) return "";
  std::vector<const measure::GpuUsage*> seen, unknown;
  for (const auto& u : m.gpu_usage) {
    if (u.job_seen == true) seen.push_back(&u);
    if (!u.job_seen && u.expected) unknown.push_back(&u);
  }
  std::string out =
      fmt::format("   {:<14}{}", "job seen on", seen.empty() ? std::string("no GPU") : gpu_list(seen));
  if (!unknown.empty())
    out += fmt::format(" (cannot tell for {}: the driver lists no processes)", gpu_list(unknown));
  out += "\n";
  for (const auto& u : m.gpu_usage) {
    if (u.job_seen == true && !u.expected)
      out += fmt::format("   warning: the job ran on GPU {} ({}), not one of its GPUs ({}): {}\n",
                         u.gpu.index, u.gpu.uuid, m.job_gpu_source,
                         u.measured ? "its energy is shown apart and is not in the total"
                                    : "its energy is not measured (--other-gpus report measures it apart)");
    if (u.job_seen == false && u.expected)
      out += fmt::format("   warning: no process of the job was seen on GPU {} ({}), one of its GPUs\n",
                         u.gpu.index, u.gpu.uuid);
  }
  return out;
}

std::string describe_method(sampling::EnergyMethod method) {
  using sampling::EnergyMethod;
  switch (method) {
    case EnergyMethod::kCounter:
      return "energy counter";
    case EnergyMethod::kSamplesReconciled:
      return "20 ms samples, reconciled to counter";
    case EnergyMethod::kInstantReconciled:
      return "instant power, reconciled to counter";
    case EnergyMethod::kSamples:
      return "20 ms samples (no counter)";
    case EnergyMethod::kInstantPower:
      return "instant power integrated (no counter)";
    case EnergyMethod::kAveragePower:
      return "averaged power integrated (lags ~1 s)";
    case EnergyMethod::kNone:
      return "n/a";
  }
  return "n/a";
}

std::string partial_label(const measure::GpuEnergy& g, Nanos job_start) {
  if (!g.failure) return "";
  return fmt::format("partial: {} at {:.1f} s", g.failure->gpu_lost ? "GPU lost" : "readings failed",
                     to_seconds(g.failure->at - job_start));
}

std::string gpu_failure_warning(const hw::GpuIdentity& gpu, Nanos since_job_start,
                                const sampling::SourceFailure& failure) {
  return fmt::format(
      "wattwise: warning: GPU {} ({}) {} at {:.1f} s of the job: {}; it is not read again and its energy "
      "will "
      "cover only the time before (the other GPUs are still measured, the job runs on)",
      gpu.index, gpu.uuid, failure.gpu_lost ? "was lost" : "failed", to_seconds(since_job_start),
      failure.error);
}

namespace {

// The checks that failed and the GPUs whose sampler was starved, one line each (nothing when all is well).
std::string checks_lines(const measure::Measurement& m) {
  std::string out;
  for (const auto& f : m.checks.failures) {
    const auto& g = m.gpu_energy.at(f.gpu);
    out += fmt::format("   warning: GPU {} failed the {} check: {}; its figures are the energy counter's "
                       "alone\n",
                       g.gpu.index, f.check, for_terminal(f.detail));
  }
  for (const auto& g : m.gpu_energy) {
    if (!g.starved()) continue;
    const std::string held_up =
        g.held_up_counter_reads > 0 ? fmt::format(", {} held up", g.held_up_counter_reads) : "";
    const std::string dropped =
        g.sample_gaps > 0 ? fmt::format(", {} stretch(es) of samples dropped", g.sample_gaps) : "";
    out += fmt::format("   warning: GPU {}'s sampler was starved of CPU ({} late counter read(s){}{}{}): wider "
                       "error bars\n",
                       g.gpu.index, g.late_counter_reads, held_up, dropped,
                       g.grid_learnt ? "" : ", posting grid learnt after the job or never");
  }
  return out;
}

nlohmann::json checks_json(const measure::Measurement& m) {
  using nlohmann::json;
  json failures = json::array();
  for (const auto& f : m.checks.failures)
    failures.push_back({{"gpu", m.gpu_energy.at(f.gpu).gpu.index}, {"check", f.check}, {"detail", f.detail}});
  return {{"passed", m.checks.passed()}, {"checked", m.checks.checked}, {"failures", failures}};
}

nlohmann::json sampler_health_json(const measure::GpuEnergy& g, Nanos job_start) {
  using nlohmann::json;
  return {{"starved", g.starved()},
          {"late_counter_reads", g.late_counter_reads},
          {"held_up_counter_reads", g.held_up_counter_reads},
          {"max_counter_read_ms", to_seconds(g.max_counter_read_call) * 1000},
          {"sample_gaps", g.sample_gaps},
          {"max_counter_read_delay_ms", to_seconds(g.max_counter_read_delay) * 1000},
          {"grid_learnt", g.grid_learnt},
          {"grid_known_s", g.grid_known_at ? json(to_seconds(*g.grid_known_at - job_start)) : json(nullptr)}};
}

}  // namespace

std::string measure_summary(const measure::Measurement& m, const FootprintRates& rates) {
  std::string out = fmt::format("\n Energy and time of '{}' (wattwise {}, {}{}):\n\n",
                                for_terminal(quoted_command(m.command)), m.tool_version, m.backend,
                                m.driver_version.empty() ? "" : ", driver " + m.driver_version);
  out += fmt::format("   {:<14}{}\n", "wall time", format_seconds(m.wall_s()));
  out += fmt::format("   {:<14}{}\n", "exit status", outcome_text(m.outcome));
  const auto energy_j = m.total_energy_j();
  out += fmt::format("   {:<14}{}{}{}\n", "energy", format_energy_bar_j(energy_j, m.total_energy_uncertainty_j()),
                     energy_j ? " (" + format_kwh(energy_kwh(*energy_j)) + ")" : "",
                     m.complete() ? "" : "  (PARTIAL: a GPU failed during the run, see below)");
  out += footprint_summary_lines(energy_j, rates);
  if (m.wattwise_cpu_s > 0)
    out += fmt::format("   {:<14}{} CPU ({:.2f}% of one core)\n", "wattwise used",
                       format_seconds(m.wattwise_cpu_s),
                       m.wall_s() > 0 ? 100 * m.wattwise_cpu_s / m.wall_s() : 0.0);
  if (const std::string line = m.sampler_cost ? sampler_cost_line(*m.sampler_cost) : ""; !line.empty())
    out += fmt::format("   {:<14}{}\n", "sampler", line);
  out += "\n";

  Table gpus({"GPU", "name", "energy", "avg power", "peak power", "method"});
  gpus.set_align(1, Table::Align::kLeft);
  gpus.set_align(5, Table::Align::kLeft);
  std::uint64_t failed_readings = 0;
  for (const auto& g : m.gpu_energy) {
    const std::string partial = partial_label(g, m.job_start);
    gpus.add_row({gpu_label(g, m.gpu_usage), g.gpu.name, format_energy_bar_j(g.energy_j, g.energy_uncertainty_j),
                  format_power_w(g.avg_power_w), format_power_w(g.peak_power_w),
                  describe_method(g.method) + (g.counter_only ? " alone (a check failed)" : "") +
                      (partial.empty() ? "" : "; " + partial)});
    failed_readings += g.failed_readings;
  }
  out += gpus.render("   ");
  out += gpu_usage_lines(m);
  for (const auto& g : m.gpu_energy) {
    if (g.failure) out += fmt::format("   {}\n", g.failure->error);
  }
  if (failed_readings > 0)
    out += fmt::format("   {} readings were lost to driver errors (counted, each one reading)\n",
                       failed_readings);
  out += checks_lines(m);

  if (m.node) out += node_summary(*m.node);

  if (!m.phase_summaries.empty()) {
    out += "\n";
    Table phases({"phase", "count", "time", "energy", "avg power", "J/sample", "GFLOPS/W", "method"});
    phases.set_align(7, Table::Align::kLeft);
    for (const auto& p : m.phase_summaries) {
      std::optional<double> avg_power;
      if (p.energy_j && p.time_s > 0) avg_power = *p.energy_j / p.time_s;
      phases.add_row({p.name, std::to_string(p.count), format_seconds(p.time_s),
                      format_energy_bar_j(p.energy_j, p.uncertainty_j),
                      format_power_w(avg_power), format_number(p.j_per_sample(), 4),
                      format_number(p.gflops_per_w(), 1), describe_method(p.method)});
    }
    out += phases.render("   ");
  }
  out += fmt::format("\n   markers: {} received, {} malformed, {} unmatched", m.received_markers(),
                     m.malformed_markers, m.unmatched_markers);
  if (m.dropped_markers > 0)
    out += fmt::format(", {} dropped by the job (wattwise's queue was full)", m.dropped_markers);
  if (m.refused_markers > 0)
    out += fmt::format(", {} refused ({})", m.refused_markers, for_terminal(m.refused_reason));
  out += "\n";
  return out;
}

nlohmann::json measure_json(const measure::Measurement& m, const FootprintRates& rates) {
  using nlohmann::json;
  json j;
  j["tool"] = "wattwise";
  j["version"] = m.tool_version;
  j["backend"] = m.backend;
  j["driver_version"] = m.driver_version;
  j["command"] = m.command;
  j["wall_s"] = m.wall_s();
  j["exit_code"] = m.outcome.exit_code;
  j["signal"] = m.outcome.signal ? json(*m.outcome.signal) : json(nullptr);
  j["timed_out"] = m.outcome.timed_out;
  j["wattwise_cpu_s"] = m.wattwise_cpu_s;
  j["sampler_cost"] = m.sampler_cost ? sampler_cost_json(*m.sampler_cost) : json(nullptr);
  j["energy_j"] = optional_json(m.total_energy_j());
  j["energy_uncertainty_j"] = m.total_energy_j() ? json(m.total_energy_uncertainty_j()) : json(nullptr);
  j.update(footprint_json(m.total_energy_j(), rates));
  j["complete"] = m.complete();
  j["job_gpus_from"] = m.job_gpu_source;

  j["gpus"] = json::array();
  for (const auto& g : m.gpu_energy) {
    j["gpus"].push_back({{"index", g.gpu.index},
                         {"uuid", g.gpu.uuid},
                         {"name", g.gpu.name},
                         {"pci_bus_id", g.gpu.pci_bus_id},
                         {"used_by_job", g.used_by_job},
                         {"via_mig", g.via_mig},
                         {"energy_j", optional_json(g.energy_j)},
                         {"energy_uncertainty_j", g.energy_j ? json(g.energy_uncertainty_j) : json(nullptr)},
                         {"method", sampling::to_string(g.method)},
                         {"counter_only", g.counter_only},
                         {"avg_power_w", optional_json(g.avg_power_w)},
                         {"peak_power_w", optional_json(g.peak_power_w)},
                         {"power_limit_max_w", optional_json(g.power_limit_max_w)}});
    json& gpu = j["gpus"].back();
    gpu["sampler"] = sampler_health_json(g, m.job_start);
    gpu["complete"] = g.complete();
    gpu["failed_readings"] = g.failed_readings;
    gpu["failure"] = nullptr;
    if (g.failure) {
      gpu["failure"] = {{"at_s", to_seconds(g.failure->at - m.job_start)},
                        {"gpu_lost", g.failure->gpu_lost},
                        {"error", g.failure->error},
                        {"covered_s", to_seconds(g.covered_until - m.job_start)},
                        {"label", partial_label(g, m.job_start)}};
    }
  }
  j["checks"] = checks_json(m);
  j["gpu_usage"] = json::array();
  for (const auto& u : m.gpu_usage)
    j["gpu_usage"].push_back({{"index", u.gpu.index},
                              {"uuid", u.gpu.uuid},
                              {"expected", u.expected},
                              {"measured", u.measured},
                              {"job_seen", u.job_seen ? json(*u.job_seen) : json(nullptr)},
                              {"pids", u.pids}});
  j["node"] = m.node ? node_json(*m.node) : json(nullptr);
  j["phases"] = json::array();
  for (const auto& p : m.phase_summaries) {
    j["phases"].push_back({{"name", p.name},
                           {"count", p.count},
                           {"time_s", p.time_s},
                           {"energy_j", optional_json(p.energy_j)},
                           {"energy_uncertainty_j", p.energy_j ? json(p.uncertainty_j) : json(nullptr)},
                           {"method", sampling::to_string(p.method)},
                           {"samples", optional_json(p.samples)},
                           {"j_per_sample", optional_json(p.j_per_sample())},
                           {"flops", optional_json(p.flops)},
                           {"gflops_per_w", optional_json(p.gflops_per_w())},
                           {"energy_mean_j", optional_json(p.energy_per_occurrence.mean())},
                           {"energy_cv", optional_json(p.energy_per_occurrence.cv())},
                           {"energy_min_j", optional_json(p.energy_per_occurrence.min())},
                           {"energy_max_j", optional_json(p.energy_per_occurrence.max())},
                           {"time_mean_s", optional_json(p.time_per_occurrence.mean())},
                           {"time_cv", optional_json(p.time_per_occurrence.cv())}});
  }
  std::vector<PhaseOccurrence> occurrences;
  occurrences.reserve(m.phase_instances.size());
  // A long job's folded occurrences count by their totals; the sample of them that leads the list, not again.
  const std::size_t sampled = m.folded ? m.folded->sample.size() : 0;
  if (m.folded) {
    for (const auto& [key, totals] : m.folded->totals.per_rank)
      occurrences.push_back({key.second >= 0 ? std::optional<int>(key.second) : std::nullopt, key.first, 0,
                             totals.time_s, totals.energy_j, totals.count});
  }
  for (std::size_t k = sampled; k < m.phase_instances.size(); ++k) {
    const auto& inst = m.phase_instances[k];
    occurrences.push_back({inst.phase.rank, inst.phase.name, inst.phase.same_name_depth,
                           to_seconds(inst.phase.end - inst.phase.begin), inst.energy_j});
  }
  j["phases_by_rank"] = phases_by_rank_json(occurrences);
  for (auto& entry : j["phases_by_rank"]) {
    const int rank = entry.at("rank").is_null() ? -1 : entry.at("rank").get<int>();
    const auto bar = m.phase_rank_uncertainty_j.find({entry.at("name").get<std::string>(), rank});
    entry["energy_uncertainty_j"] =
        bar != m.phase_rank_uncertainty_j.end() && !entry.at("energy_j").is_null() ? json(bar->second) : json(nullptr);
  }
  j["phase_instances"] = json::array();
  const std::vector<std::size_t> listed = listed_phase_instances(m.phase_instances);
  j["phase_instances_left_out"] =
      m.phase_instances.size() - listed.size() + (m.folded ? m.folded->instances - sampled : 0);
  for (const std::size_t position : listed) {
    const measure::PhaseInstance& inst = m.phase_instances[position];
    json per_gpu = json::array();
    for (const auto& e : inst.energy_per_gpu_j) per_gpu.push_back(optional_json(e));
    j["phase_instances"].push_back({{"name", inst.phase.name},
                                    {"begin_s", to_seconds(inst.phase.begin - m.job_start)},
                                    {"end_s", to_seconds(inst.phase.end - m.job_start)},
                                    {"pid", inst.phase.pid},
                                    {"rank", inst.phase.rank ? json(*inst.phase.rank) : json(nullptr)},
                                    {"same_name_depth", inst.phase.same_name_depth},
                                    {"counters", inst.phase.counters},
                                    {"energy_j", optional_json(inst.energy_j)},
                                    {"energy_uncertainty_j",
                                     inst.energy_j ? json(inst.uncertainty_j) : json(nullptr)},
                                    {"energy_per_gpu_j", per_gpu},
                                    {"method", sampling::to_string(inst.method)}});
  }
  j["markers"] = {{"received", m.received_markers()},
                  {"malformed", m.malformed_markers},
                  {"unmatched", m.unmatched_markers},
                  {"folded", m.folded ? m.folded->markers : 0},
                  {"dropped", m.dropped_markers},
                  {"refused", m.refused_markers},
                  {"refused_reason", m.refused_reason.empty() ? json(nullptr) : json(m.refused_reason)}};
  return j;
}

}  // namespace wattwise::report
