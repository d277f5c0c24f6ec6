#include <optional>
#include <vector>

#include "report/html/report_parts.hpp"

namespace wattwise::report::html {

namespace {

// Mean of the values present; absent when none is.
std::optional<double> mean_present(const std::vector<std::optional<double>>& values) {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& v : values) {
    if (!v) continue;
    sum += *v;
    ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

}  // namespace

void fill_node(ReportModel& model, const std::vector<RunDetail>& details) {
  for (auto& row : model.table) {
    std::vector<std::optional<double>> cpu_dram, meter;
    for (const auto& run : details) {
      if (find_setting(model, run.setting) != row.setting_index) continue;
      cpu_dram.push_back(run.node_cpu_dram_j);
      meter.push_back(run.node_meter_j);
    }
    row.node_cpu_dram_j = mean_present(cpu_dram);
    row.node_meter_j = mean_present(meter);
  }
}

}  // namespace wattwise::report::html
