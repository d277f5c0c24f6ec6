#pragma once

#include <nlohmann/json.hpp>

#include "analysis/analysis.hpp"

namespace wattwise::analysis {

// The `wattwise analyze --json` object (DESIGN.md "Command line" contract):
//   reference        {setting, energy_j, time_s}
//   settings         [{setting, n, energy_j, time_s, power_w, j_per_sample, gflops_per_w (each
//                    {mean, std, ci95}, std/ci95 null without repeats; the last two null when not reported),
//                    metrics {name: value normalised to the reference}, pareto, labels}]
//   recommendations  [{metric, setting, energy_j, time_s, energy_vs_ref_pct, time_vs_ref_pct, significant
//                    (bool or null), note, metric_value}]
//   max_slowdown_pct number or null
nlohmann::json to_json(const Analysis& analysis);

// A setting as an object knob -> value.
nlohmann::json setting_json(const Setting& setting);

}  // namespace wattwise::analysis
