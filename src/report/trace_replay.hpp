#pragma once

#include <optional>
#include <string>
#include <vector>

#include "measure/measurement.hpp"
#include "sampling/trace.hpp"

namespace wattwise::report {

// A measurement read back from the files `measure --trace` wrote (report/trace_csv.hpp: the trace CSV and the
// phases CSV beside it), as far as they carry it: each GPU's counter reads, power and sample gaps (so a
// window with an edge in one carries its bar as it did live), the job's window (its
// "# job_start_s" and "# job_end_s" lines; the trace's own span in older files), the phases with their ranks
// and depths, and the energy the measurement gave each. Enough to account the run again offline
// (measure::account_checked: the checks and error bars of today on a trace of yesterday) and to replay one
// GPU under another counter schedule (bench/replay_trace.cpp). Times are kept as written: since the job began.
struct ReplayedRun {
  measure::Measurement measurement;  // gpus (by index), traces, phases, job_start (0) and job_end
  std::vector<std::optional<double>> measured_phase_j;  // the phases CSV's energy_j, one per phase
};

// What the files do not say about the run.
struct ReplayOptions {
  std::size_t job_gpus = 0;                      // the first N GPUs (by index) ran the job; 0: all did
  std::optional<double> power_limit_max_w;       // every GPU's highest power limit (fake_nvml.json "max")
};

// Unreadable files are an environment_error, malformed lines a data_error naming the file and line.
ReplayedRun read_replayed_run(const std::string& trace_csv, const std::string& phases_csv,
                              const ReplayOptions& options = {});

// One GPU's trace from a trace CSV (an empty trace when the file has no line for it).
sampling::GpuTrace read_gpu_trace_csv(const std::string& trace_csv, unsigned gpu);

}  // namespace wattwise::report
