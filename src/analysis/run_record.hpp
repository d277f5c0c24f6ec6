#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/node_parts.hpp"

namespace wattwise::analysis {

// A point in knob space: knob name with its unit (power_limit_w, sm_clock_mhz, batch, gpus) -> value.
// Ordered, so two settings compare and print the same way everywhere.
using Setting = std::map<std::string, double>;

// A marked phase of one run (docs/markers.md), all its occurrences and the job's GPUs together: the
// training or the epochs of a job, as opposed to its start-up.
struct PhaseRecord {
  std::string name;
  unsigned count = 0;                            // how many times the phase ran
  double time_s = 0;                             // summed over its occurrences
  std::optional<double> energy_j;                // absent: not measured
  std::optional<NodeParts> node = std::nullopt;  // the node over the phase's time; absent: not stored
  std::optional<double> energy_uncertainty_j = std::nullopt;  // energy_j's error bar (+-); absent: unknown
};

// One measured run, wherever it came from (a sweep database, a CSV of published results).
struct RunRecord {
  Setting setting;
  int repeat = 0;
  double time_s = 0;
  double energy_j = 0;
  std::optional<double> work;       // samples processed, when the job reports it
  std::optional<double> flops;      // operations performed, when the job reports it
  std::string label;                // free text, kept as given
  bool ok = true;                   // a failed run is kept for the record but never analysed
  std::vector<PhaseRecord> phases;  // empty when the source has none (a runs CSV)
  // The node over the run (every measured GPU, idle ones included, and the node sources); absent when the
  // source has no per-GPU figures (a runs CSV, a multi-node run). energy_j is the job's GPUs'.
  std::optional<NodeParts> node;
  std::optional<unsigned> job_gpus;       // how many GPUs the job was given, when known
  std::optional<unsigned> measured_gpus;  // how many were measured (the job's and idle ones), when known
  // energy_j's error bar (+-) from the measurement's accounting (counter brackets, postings, alignment); not
  // the spread of repeats. Absent: unknown (a runs CSV without the column, a database before schema 7).
  std::optional<double> energy_uncertainty_j;
};

// "power_limit_w=150,batch=64": knobs in name order, values in their shortest exact form.
std::string to_string(const Setting& setting);

// Two settings name the same point when they have the same knobs and values equal to 1e-9 relative:
// values read from text and values computed from limits must still meet.
bool same_setting(const Setting& a, const Setting& b);

// True when every knob named in `partial` exists in `setting` with an equal value (as same_setting).
bool matches(const Setting& setting, const Setting& partial);

}  // namespace wattwise::analysis
