#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/resample.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// Both readers take any bytes (they are fuzz targets): what they cannot read is a data_error
// (wattwise::Error) naming `source_name` and the line; nothing else is thrown but std::bad_alloc. Text is
// repaired to UTF-8.
//
// Reads the total power of a run from a trace CSV (report/trace_csv.hpp: time_s,gpu,...,power_inst_w,
// power_sample_w,...). Per GPU the finest source wins: the 20 ms buffered samples, else the instantaneous
// power. With several GPUs their powers are summed on a common grid, only where every GPU has data.
// A trace without any power column value is a data_error naming `source_name`.
// When the trace names the job's window (comment lines "# job_start_s=S" and "# job_end_s=E", written by
// `wattwise measure --trace` since issue 10), the power is cut to it: linear at the edges, nothing after
// the job's end, so the report's whole-run figures are measure's. Older traces are used whole.
struct PowerTrace {
  analysis::TimeSeries power_w;
  std::vector<GpuTrace> per_gpu_w;  // each GPU's finest source, cut to the job's window like power_w
  std::optional<double> job_start_s;
  std::optional<double> job_end_s;
};
PowerTrace read_power_trace(std::istream& in, const std::string& source_name);
analysis::TimeSeries read_power_trace_csv(std::istream& in, const std::string& source_name);

// The part of `s` inside [begin_s, end_s], with points interpolated at the edges that fall between samples.
analysis::TimeSeries clip_to_window(const analysis::TimeSeries& s, double begin_s, double end_s);

// Reads the phases CSV beside a trace (name,begin_s,end_s,rank,energy_j,method,counters): one entry per
// occurrence, with its begin, duration and energy (absent when the file has none). Occurrences nested in one
// of the same name (same_name_depth > 0) are left out, so totals count each stretch of time once.
std::vector<PhaseTotal> read_phases_csv(std::istream& in, const std::string& source_name);

// The same, with each occurrence's place in time beside its total (spans[i] is totals[i]).
struct PhasesCsv {
  std::vector<PhaseTotal> totals;
  std::vector<PhaseSpan> spans;
};
PhasesCsv read_phases_csv_with_spans(std::istream& in, const std::string& source_name);

}  // namespace wattwise::report::html
