#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "exporter/exposition.hpp"
#include "exporter/job_energy.hpp"
#include "hw/gpu.hpp"

namespace wattwise::exporter {

// What one scrape shows of one GPU.
struct GpuSnapshot {
  hw::GpuIdentity identity;
  bool up = true;                       // false once the sampler gave the GPU up (lost, or failing)
  double energy_j = 0;                  // EnergyTotal::joules_at(the scrape)
  double energy_uncertainty_j = 0;      // its error bar, EnergyTotal::uncertainty_j_at(the scrape)
  std::optional<double> power_w;        // the latest power reading
  std::optional<double> power_limit_w;  // the limit that is set
  hw::Telemetry telemetry;              // the latest telemetry; absent fields are left out
  std::uint64_t counter_breaks = 0;
};

struct NodeSnapshot {
  std::string hostname;
  std::vector<GpuSnapshot> gpus;
  std::vector<JobEnergy::Job> jobs;
  std::size_t jobs_evicted_scheduler = 0;  // JobEnergy::evicted, per source
  std::size_t jobs_evicted_user = 0;
};

// The metric families of a scrape: the contract documented in docs/operators.md ("Metrics"). GPU series
// carry dcgm-exporter's labels (gpu, UUID, pci_bus_id, device, modelName, Hostname) so dashboards can
// join the two; a reading the GPU does not support is left out, never exported as 0.
std::vector<MetricFamily> node_metrics(const NodeSnapshot& snapshot);

}  // namespace wattwise::exporter
