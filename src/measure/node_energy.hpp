#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.hpp"
#include "core/node_parts.hpp"
#include "hw/meter_command.hpp"
#include "hw/node_source.hpp"
#include "sampling/node_sampler.hpp"

namespace wattwise::measure {

// Node power beside the GPUs (docs/node-power.md): which sources to read and how.
struct NodeOptions {
  bool powercap = true;                 // CPU package and DRAM energy from Linux powercap (RAPL)
  std::filesystem::path powercap_root;  // empty: $WATTWISE_POWERCAP_ROOT, else /sys/class/powercap
  std::vector<std::string> meter_argv;  // --meter-cmd split into words; empty: no meter
  Nanos meter_timeout = hw::kDefaultMeterTimeout;
  Nanos period = sampling::kDefaultNodePeriod;
  // Where the one-line warnings go (a root-only energy_uj, a meter given up); empty: stderr. A sweep
  // passes one that says each thing once, not once per run.
  std::function<void(const std::string& line)> on_warning;
};

// One node source over the job.
struct NodeSourceEnergy {
  std::string name;  // "package-0", "dram-0", "meter"
  hw::NodeKind kind = hw::NodeKind::kMeter;
  std::string origin;
  std::optional<double> energy_j;  // absent: not covered (a meter given up, too few readings)
  std::optional<double> avg_power_w;
  std::size_t readings = 0;
  std::uint64_t failed_readings = 0;
  std::string error;  // the first failed reading's reason; empty when none failed
};

// The node's energy over the job, by source and summed. Each total is absent where a part is missing.
struct NodeEnergy {
  Nanos period{0};
  std::vector<NodeSourceEnergy> sources;
  std::optional<double> cpu_package_j;  // sum of the CPU packages
  std::optional<double> dram_j;         // sum of the DRAM zones
  std::optional<double> meter_j;
  // Every measured GPU (the job's and idle ones: CPU and DRAM are the whole node's too) + CPU packages
  // + DRAM where the node has it; absent without GPU or CPU figures. `sum_parts` says what was added.
  std::optional<double> sum_j;
  std::vector<std::string> sum_parts;
  std::vector<std::string> warnings;  // as given to on_warning
};

// The node sources' parts (CPU packages, DRAM, meter) summed over `spans`; gpus_j is left absent. A part
// the node has but whose readings miss one span is absent; one the node lacks stays absent.
NodeParts node_source_parts(const std::vector<sampling::NodeTrace>& traces,
                            const std::vector<std::pair<Nanos, Nanos>>& spans);

// The sources the options ask for, found now; warnings (root-only RAPL) go to on_warning and `warnings`.
std::vector<std::unique_ptr<hw::NodeSource>> open_node_sources(const NodeOptions& options,
                                                               std::vector<std::string>& warnings);

// The figures over [t0, t1] from the node sampler's traces; `gpu_energy_j` is every measured GPU's.
NodeEnergy node_energy(const std::vector<sampling::NodeTrace>& traces, Nanos t0, Nanos t1,
                       const std::vector<std::optional<double>>& gpu_energy_j);

// The warning line for a source whose readings failed so that it has no figure (a meter that hung or
// printed garbage); empty when it has one, or never failed.
std::string failed_source_warning(const sampling::NodeTrace& trace, const NodeSourceEnergy& figures);

void warn(const NodeOptions& options, const std::string& line);

}  // namespace wattwise::measure
