#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "measure/node_energy.hpp"

namespace wattwise::report {

// The node's part of the measure summary: each source (what it read, from where) and the totals.
std::string node_summary(const measure::NodeEnergy& node);

// The "node" object of docs/measure-json.md.
nlohmann::json node_json(const measure::NodeEnergy& node);

}  // namespace wattwise::report
