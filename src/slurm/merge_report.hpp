#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace wattwise::slurm {

// The merged step for people: per node, per task, the step's phases and its total (aligned tables, units).
std::string merge_summary(const nlohmann::json& merged);

}  // namespace wattwise::slurm
