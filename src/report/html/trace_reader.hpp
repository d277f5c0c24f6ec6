#pragma once

#include <istream>
#include <string>
#include <vector>

#include "analysis/resample.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// Reads the total power of a run from a trace CSV (report/trace_csv.hpp: time_s,gpu,...,power_inst_w,
// power_sample_w,...). Per GPU the finest source wins: the 20 ms buffered samples, else the instantaneous
// power. With several GPUs their powers are summed on a common grid, only where every GPU has data.
// A trace without any power column value is a data_error naming `source_name`.
analysis::TimeSeries read_power_trace_csv(std::istream& in, const std::string& source_name);

// Reads the phases CSV beside a trace (name,begin_s,end_s,rank,energy_j,method,counters): one entry per
// occurrence, with its duration and energy (absent when the file has none).
std::vector<PhaseTotal> read_phases_csv(std::istream& in, const std::string& source_name);

}  // namespace wattwise::report::html
