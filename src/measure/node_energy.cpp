#include "measure/node_energy.hpp"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "hw/powercap.hpp"

namespace wattwise::measure {

namespace {

std::optional<double> sum_of(const std::vector<NodeSourceEnergy>& sources, hw::NodeKind kind) {
  std::optional<double> total;
  bool first = true;
  for (const auto& s : sources)
    if (s.kind == kind) add_part(total, first, s.energy_j);
  return total;
}

}  // namespace

void warn(const NodeOptions& options, const std::string& line) {
  if (options.on_warning)
    options.on_warning(line);
  else
    std::cerr << line << "\n" << std::flush;
}

std::vector<std::unique_ptr<hw::NodeSource>> open_node_sources(const NodeOptions& options,
                                                               std::vector<std::string>& warnings) {
  std::vector<std::unique_ptr<hw::NodeSource>> sources;
  if (options.powercap) {
    const auto root =
        options.powercap_root.empty() ? hw::powercap_root_from_environment() : options.powercap_root;
    const auto found = hw::discover_powercap(root);
    for (const auto& line : found.warnings) {
      warnings.push_back(line);
      warn(options, line);
    }
    sources = hw::powercap_sources(found);
  }
  if (!options.meter_argv.empty())
    sources.push_back(std::make_unique<hw::MeterCommand>(options.meter_argv, options.meter_timeout));
  return sources;
}

std::string failed_source_warning(const sampling::NodeTrace& trace, const NodeSourceEnergy& figures) {
  if (trace.failed_readings == 0 || figures.energy_j) return "";
  return fmt::format(
      "wattwise: warning: {} failed {} reading(s){} ({}): its node figures are absent; run it by hand to "
      "see why (the job was measured on)",
      trace.name == "meter" ? std::string("the meter") : trace.name, trace.failed_readings,
      trace.given_up
          ? fmt::format(" and was given up after {} in a row", sampling::kNodeFailuresBeforeGivingUp)
          : std::string(),
      trace.first_error);
}

NodeEnergy node_energy(const std::vector<sampling::NodeTrace>& traces, Nanos t0, Nanos t1,
                       const std::vector<std::optional<double>>& gpu_energy_j) {
  NodeEnergy node;
  for (const auto& trace : traces) {
    NodeSourceEnergy s;
    s.name = trace.name;
    s.kind = trace.kind;
    s.origin = trace.origin;
    s.energy_j = sampling::node_energy_j(trace, t0, t1);
    if (s.energy_j && t1 > t0) s.avg_power_w = *s.energy_j / to_seconds(t1 - t0);
    s.readings = trace.samples.size();
    s.failed_readings = trace.failed_readings;
    s.error = trace.first_error;
    node.sources.push_back(s);
  }
  const auto has = [&](hw::NodeKind kind) {
    for (const auto& s : node.sources)
      if (s.kind == kind) return true;
    return false;
  };
  if (has(hw::NodeKind::kCpuPackage)) node.cpu_package_j = sum_of(node.sources, hw::NodeKind::kCpuPackage);
  if (has(hw::NodeKind::kDram)) node.dram_j = sum_of(node.sources, hw::NodeKind::kDram);
  if (has(hw::NodeKind::kMeter)) node.meter_j = sum_of(node.sources, hw::NodeKind::kMeter);
  if (!gpu_energy_j.empty() && node.cpu_package_j) {
    std::optional<double> sum;
    bool first = true;
    for (const auto& gpu : gpu_energy_j) add_part(sum, first, gpu);
    add_part(sum, first, node.cpu_package_j);
    node.sum_parts = {"gpus", "cpu_package"};
    if (has(hw::NodeKind::kDram)) {
      add_part(sum, first, node.dram_j);
      node.sum_parts.push_back("dram");
    }
    node.sum_j = sum;
  }
  return node;
}

NodeParts node_source_parts(const std::vector<sampling::NodeTrace>& traces,
                            const std::vector<std::pair<Nanos, Nanos>>& spans) {
  NodeParts parts;
  bool first_cpu = true, first_dram = true, first_meter = true;
  for (const auto& [t0, t1] : spans) {
    const NodeEnergy span = node_energy(traces, t0, t1, {});
    // A part the node has (its kind among the sources) but that one span lacks makes the sum absent.
    const auto has = [&](hw::NodeKind kind) {
      return std::any_of(span.sources.begin(), span.sources.end(),
                         [&](const NodeSourceEnergy& s) { return s.kind == kind; });
    };
    if (has(hw::NodeKind::kCpuPackage)) add_part(parts.cpu_package_j, first_cpu, span.cpu_package_j);
    if (has(hw::NodeKind::kDram)) add_part(parts.dram_j, first_dram, span.dram_j);
    if (has(hw::NodeKind::kMeter)) add_part(parts.meter_j, first_meter, span.meter_j);
  }
  return parts;
}

}  // namespace wattwise::measure
