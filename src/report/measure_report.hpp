#pragma once

#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "core/footprint.hpp"
#include "measure/measurement.hpp"

namespace wattwise::report {

// The perf-stat-like summary of one measurement, for people. The energy is also shown in kWh; CO2e and
// cost only where `rates` has a carbon intensity or a price (docs/footprint.md).
std::string measure_summary(const measure::Measurement& m, const FootprintRates& rates = {});

// The same measurement for programs; the fields are documented in docs/measure-json.md.
nlohmann::json measure_json(const measure::Measurement& m, const FootprintRates& rates = {});

// Where the job's processes were seen ("job seen on: GPU 1"), and a warning line for a GPU the job ran on
// but was not given, and for one of its GPUs where no process of it was seen (only where the driver could
// tell). Empty when detection did not run (a simulated job).
std::string gpu_usage_lines(const measure::Measurement& m);

// Human words for a method, e.g. "energy counter" or "20 ms samples reconciled to the counter".
std::string describe_method(sampling::EnergyMethod method);

// For a GPU whose sources failed during the run, e.g. "partial: GPU lost at 12.3 s"; empty otherwise.
std::string partial_label(const measure::GpuEnergy& g, Nanos job_start);

// The line for stderr when a GPU fails during a run: which GPU, when, the driver's error, what it means.
std::string gpu_failure_warning(const hw::GpuIdentity& gpu, Nanos since_job_start,
                                const sampling::SourceFailure& failure);

}  // namespace wattwise::report
