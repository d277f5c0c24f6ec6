#include "slurm/merge_report.hpp"

#include <fmt/format.h>

#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::slurm {

namespace {

using nlohmann::json;
using report::Table;

std::optional<double> number(const json& value) {
  return value.is_number() ? std::optional<double>(value.get<double>()) : std::nullopt;
}

std::string nodes_table(const json& merged) {
  Table table({"node", "tasks", "GPUs", "wall", "energy"});
  for (const auto& node : merged.at("nodes"))
    table.add_row({node.at("node").get<std::string>(), std::to_string(node.at("tasks").size()),
                   std::to_string(node.at("gpus").size()), report::format_seconds(number(node.at("wall_s"))),
                   report::format_energy_j(number(node.at("energy_j")))});
  return table.render("   ");
}

std::string tasks_table(const json& merged) {
  Table table({"task", "node", "local", "GPUs", "exit", "wall", "energy", "phases"});
  for (const auto& task : merged.at("tasks")) {
    const auto& exit_code = task.at("exit_code");
    table.add_row({std::to_string(task.at("task_id").get<int>()), task.at("node").get<std::string>(),
                   std::to_string(task.at("local_id").get<int>()), std::to_string(task.at("gpus").size()),
                   exit_code.is_number() ? std::to_string(exit_code.get<int>()) : "n/a",
                   report::format_seconds(number(task.at("wall_s"))),
                   report::format_energy_j(number(task.at("energy_j"))),
                   std::to_string(task.at("phases").size())});
  }
  table.set_align(0, Table::Align::kRight);
  table.set_align(1, Table::Align::kLeft);
  return table.render("   ");
}

std::string phases_table(const json& merged) {
  Table table({"phase", "count", "time", "energy"});
  for (const auto& phase : merged.at("phases"))
    table.add_row({phase.at("name").get<std::string>(), std::to_string(phase.at("count").get<int>()),
                   report::format_seconds(number(phase.at("time_s"))),
                   report::format_energy_j(number(phase.at("energy_j")))});
  return table.render("   ");
}

}  // namespace

std::string merge_summary(const json& merged) {
  std::string out = fmt::format(
      "\n SLURM job {} step {}: {} task(s) on {} node(s){}\n\n", merged.at("job_id").get<std::string>(),
      merged.at("step_id").get<std::string>(), merged.at("tasks").size(), merged.at("nodes").size(),
      merged.at("complete").get<bool>() ? "" : " (INCOMPLETE)");
  // Appended piece by piece: g++ 12 warns falsely (-Wrestrict) on "\n" + std::string.
  out += nodes_table(merged);
  out += '\n';
  out += tasks_table(merged);
  if (!merged.at("phases").empty()) {
    out += '\n';
    out += phases_table(merged);
  }
  out += fmt::format("\n   total: {} over {} (the longest task's wall time)\n",
                     report::format_energy_j(number(merged.at("energy_j"))),
                     report::format_seconds(number(merged.at("wall_s"))));
  return out;
}

}  // namespace wattwise::slurm
