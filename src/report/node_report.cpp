#include "report/node_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string sum_label(const std::vector<std::string>& parts) {
  std::vector<std::string> words;
  for (const auto& part : parts)
    words.push_back(part == "gpus" ? "GPUs" : part == "cpu_package" ? "CPU" : part == "dram" ? "DRAM" : part);
  return fmt::format("{}", fmt::join(words, "+"));
}

}  // namespace

std::string node_summary(const measure::NodeEnergy& node) {
  Table table({"node", "energy", "avg power", "from"});
  table.set_align(3, Table::Align::kLeft);
  for (const auto& s : node.sources) {
    std::string from = s.origin;
    if (s.failed_readings > 0) from += fmt::format("; {} failed reading(s): {}", s.failed_readings, s.error);
    table.add_row({s.name, format_energy_j(s.energy_j), format_power_w(s.avg_power_w), from});
  }
  const auto total_row = [&](const std::string& label, const std::optional<double>& energy_j,
                             const std::string& from) {
    table.add_row({label, format_energy_j(energy_j), "", from});
  };
  if (node.cpu_package_j) total_row("CPU", node.cpu_package_j, "sum of the CPU packages");
  if (node.dram_j) total_row("DRAM", node.dram_j, "sum of the DRAM zones");
  if (!node.sum_parts.empty())
    total_row(sum_label(node.sum_parts), node.sum_j,
              "every measured GPU + CPU packages + DRAM where present");
  return fmt::format("\n   node power, read every {}:\n", format_seconds(to_seconds(node.period))) +
         table.render("   ");
}

nlohmann::json node_json(const measure::NodeEnergy& node) {
  nlohmann::json j;
  j["period_s"] = to_seconds(node.period);
  j["cpu_package_j"] = optional_json(node.cpu_package_j);
  j["dram_j"] = optional_json(node.dram_j);
  j["meter_j"] = optional_json(node.meter_j);
  j["sum_j"] = optional_json(node.sum_j);
  j["sum_parts"] = node.sum_parts;
  j["sources"] = nlohmann::json::array();
  for (const auto& s : node.sources) {
    j["sources"].push_back({{"name", s.name},
                            {"kind", hw::to_string(s.kind)},
                            {"origin", s.origin},
                            {"energy_j", optional_json(s.energy_j)},
                            {"avg_power_w", optional_json(s.avg_power_w)},
                            {"readings", s.readings},
                            {"failed_readings", s.failed_readings},
                            {"error", s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error)}});
  }
  j["warnings"] = node.warnings;
  return j;
}

}  // namespace wattwise::report
