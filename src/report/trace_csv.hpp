#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "measure/measurement.hpp"

namespace wattwise::report {

// A column of the trace CSV: the name carries the unit, as DESIGN.md asks.
struct TraceColumn {
  const char* name;
  const char* description;
};
const std::vector<TraceColumn>& trace_columns();

// The comment line that records where a GPU's buffered samples have a gap (a late drain lost them):
// "# sample_gap gpu=G after_s=A before_s=B", A the last sample before it, B the first after (seconds since
// the job started). trace_replay reads it back into GpuTrace::sample_gaps.
inline constexpr const char* kSampleGapLine = "# sample_gap ";

// Writes the trace: a comment line with the tool version and method, the job's window as comment lines
// "# job_start_s=0.000000" and "# job_end_s=W" (W the wall time), one sample_gap line per gap in the
// buffered samples (kSampleGapLine), a header, then one row per reading
// event (time since the job started in seconds, GPU index, the readings taken at that moment; the other
// columns empty). Rows are sorted by time. With `only_gpu`, the same file with that GPU's rows alone (a
// sweep stores each GPU's trace so).
void write_trace_csv(std::ostream& out, const measure::Measurement& m,
                     std::optional<unsigned> only_gpu = std::nullopt);

// The phases beside the trace: name, begin_s, end_s, rank, energy_j, method, counters (key=value;...),
// same_name_depth (how many phases of the same name and process contain this one; totals count depth 0).
void write_phases_csv(std::ostream& out, const measure::Measurement& m);

}  // namespace wattwise::report
