#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "measure/measurement.hpp"

namespace wattwise::report {

// The perf-stat-like summary of one measurement, for people.
std::string measure_summary(const measure::Measurement& m);

// The same measurement for programs; the fields are documented in docs/measure-json.md.
nlohmann::json measure_json(const measure::Measurement& m);

// Human words for a method, e.g. "energy counter" or "20 ms samples reconciled to the counter".
std::string describe_method(sampling::EnergyMethod method);

}  // namespace wattwise::report
