#include "exporter/node_metrics.hpp"

#include <fmt/format.h>

#include <functional>

namespace wattwise::exporter {
namespace {

Labels gpu_labels(const GpuSnapshot& gpu, const std::string& hostname) {
  const std::string index = std::to_string(gpu.identity.index);
  return {{"gpu", index},
          {"UUID", gpu.identity.uuid},
          {"pci_bus_id", gpu.identity.pci_bus_id},
          {"device", "nvidia" + index},
          {"modelName", gpu.identity.name},
          {"Hostname", hostname}};
}

// One family with a sample per GPU that has a value for it.
MetricFamily per_gpu(const NodeSnapshot& snapshot, std::string name, std::string help, MetricType type,
                     const std::function<std::optional<double>(const GpuSnapshot&)>& value) {
  MetricFamily family{std::move(name), std::move(help), type, {}};
  for (const GpuSnapshot& gpu : snapshot.gpus) {
    if (const auto v = value(gpu)) family.samples.push_back({gpu_labels(gpu, snapshot.hostname), *v});
  }
  return family;
}

// One family with a sample per job.
MetricFamily per_job(const NodeSnapshot& snapshot, std::string name, std::string help, MetricType type,
                     const std::function<double(const JobEnergy::Job&)>& value) {
  MetricFamily family{std::move(name), std::move(help), type, {}};
  for (const JobEnergy::Job& job : snapshot.jobs)
    family.samples.push_back({{{"job_id", job.job.id},
                               {"job_id_source", std::string(job_source_label(job.job.source))},
                               {"Hostname", snapshot.hostname}},
                              value(job)});
  return family;
}

std::optional<double> scaled(const std::optional<unsigned>& value, double factor) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value) * factor;
}

}  // namespace

std::vector<MetricFamily> node_metrics(const NodeSnapshot& s) {
  using T = MetricType;
  std::vector<MetricFamily> families;
  families.push_back(
      per_gpu(s, "wattwise_gpu_energy_joules_total",
              "Energy the GPU used since the exporter started (driver energy counter, extended "
              "between reads by the power readings; never decreases).",
              T::kCounter, [](const GpuSnapshot& g) { return g.energy_j; }));
  families.push_back(
      per_gpu(s, "wattwise_gpu_energy_uncertainty_joules",
              "Error bar (+-) of wattwise_gpu_energy_joules_total: the true energy lies within the total +- "
              "this (energy integrated from power readings rather than counted, the latest counter value's "
              "posting, a total served ahead of the counter).",
              T::kGauge, [](const GpuSnapshot& g) { return g.energy_uncertainty_j; }));
  families.push_back(per_gpu(s, "wattwise_gpu_power_watts", "Latest power reading of the GPU.", T::kGauge,
                             [](const GpuSnapshot& g) { return g.power_w; }));
  families.push_back(per_gpu(s, "wattwise_gpu_power_limit_watts", "Power limit set on the GPU.", T::kGauge,
                             [](const GpuSnapshot& g) { return g.power_limit_w; }));
  families.push_back(per_gpu(s, "wattwise_gpu_sm_clock_hertz", "SM clock of the GPU.", T::kGauge,
                             [](const GpuSnapshot& g) { return scaled(g.telemetry.sm_clock_mhz, 1e6); }));
  families.push_back(per_gpu(s, "wattwise_gpu_memory_clock_hertz", "Memory clock of the GPU.", T::kGauge,
                             [](const GpuSnapshot& g) { return scaled(g.telemetry.mem_clock_mhz, 1e6); }));
  families.push_back(per_gpu(s, "wattwise_gpu_temperature_celsius", "GPU temperature.", T::kGauge,
                             [](const GpuSnapshot& g) { return scaled(g.telemetry.temp_c, 1); }));
  families.push_back(per_gpu(s, "wattwise_gpu_utilization_ratio",
                             "Fraction of the last sample period during which a kernel ran (0 to 1).",
                             T::kGauge,
                             [](const GpuSnapshot& g) { return scaled(g.telemetry.util_gpu_pct, 0.01); }));
  families.push_back(
      per_gpu(s, "wattwise_gpu_memory_utilization_ratio",
              "Fraction of the last sample period during which memory was read or written (0 to 1).",
              T::kGauge, [](const GpuSnapshot& g) { return scaled(g.telemetry.util_mem_pct, 0.01); }));
  families.push_back(per_gpu(s, "wattwise_gpu_up",
                             "1 while the GPU is read, 0 once it was lost or kept failing.", T::kGauge,
                             [](const GpuSnapshot& g) { return g.up ? 1.0 : 0.0; }));
  families.push_back(per_gpu(s, "wattwise_gpu_energy_counter_resets_total",
                             "Times the driver's energy counter went down (driver reload, wrap); the energy "
                             "across each was integrated from power readings.",
                             T::kCounter,
                             [](const GpuSnapshot& g) { return static_cast<double>(g.counter_breaks); }));

  families.push_back(per_job(
      s, "wattwise_job_energy_joules_total",
      fmt::format("Energy of the node's GPUs used by a job, since the exporter first saw it. job_id_source "
                  "says who named the job: slurm (the job's cgroup or SLURM_JOB_ID) or user "
                  "(WATTWISE_JOB_ID, which any user may set); the {} most recently seen jobs of each "
                  "source are kept.",
                  kMaxJobs),
      T::kCounter, [](const JobEnergy::Job& job) { return job.energy_j; }));
  families.push_back(per_job(s, "wattwise_job_energy_uncertainty_joules",
                             "Error bar (+-) of wattwise_job_energy_joules_total: the GPUs' bars grown while "
                             "the job was on them, and its first and latest polls' energy (a job is resolved "
                             "to the poll).",
                             T::kGauge, [](const JobEnergy::Job& job) { return job.uncertainty_j; }));
  families.push_back(
      {"wattwise_exporter_jobs_evicted_total",
       fmt::format("Jobs whose series were dropped to keep at most {} job series per source.", kMaxJobs),
       T::kCounter,
       {{{{"job_id_source", std::string(job_source_label(JobSource::kScheduler))}, {"Hostname", s.hostname}},
         static_cast<double>(s.jobs_evicted_scheduler)},
        {{{"job_id_source", std::string(job_source_label(JobSource::kUser))}, {"Hostname", s.hostname}},
         static_cast<double>(s.jobs_evicted_user)}}});
  return families;
}

}  // namespace wattwise::exporter
