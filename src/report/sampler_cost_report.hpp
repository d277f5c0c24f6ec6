#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "measure/measurement.hpp"

namespace wattwise::report {

// `sampler_cost` of `measure --json` (docs/measure-json.md): where wattwise's CPU went, per GPU and call
// kind.
nlohmann::json sampler_cost_json(const measure::SamplerCostReport& cost);

// One line for the summary: the sampling thread's CPU per GPU and the call kind that cost most, e.g.
// "1.62% of a core per GPU (energy_counter 1.48%; counter reads 41: 24 learning, 2 lock checks)".
std::string sampler_cost_line(const measure::SamplerCostReport& cost);

}  // namespace wattwise::report
