#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "analysis/statistics.hpp"

namespace wattwise::analysis {

// One measured (time, energy) pair of a repeat, kept so per-run metrics and tests of significance can be
// computed once the reference is known.
struct RunPoint {
  double time_s = 0;
  double energy_j = 0;
};

// All successful repeats of one setting, summarised.
struct SettingAggregate {
  Setting setting;
  std::vector<RunPoint> runs;
  Summary energy_j;
  // The measurement's error bar (+-) of energy_j's mean: the repeats' own bars averaged (kept whole, not
  // divided by sqrt(n): what biases one repeat's accounting, an alignment or a posting grid, may bias
  // them all). Separate from energy_j.stddev, the spread of the repeats. Absent when any repeat's is unknown.
  std::optional<double> energy_uncertainty_j;
  Summary time_s;
  Summary power_w;                      // per run E / t
  std::optional<Summary> j_per_sample;  // over runs that report work
  std::optional<Summary> gflops_per_w;  // over runs that report flops (flops / E / 1e9)
  std::vector<std::string> labels;      // distinct non-empty labels, in order of appearance
};

// Groups runs by setting (runs with ok == false are left out) and summarises each group. The result is in
// setting order (knob names, then values), so output does not depend on the order the runs were measured.
std::vector<SettingAggregate> aggregate_runs(const std::vector<RunRecord>& runs);

}  // namespace wattwise::analysis
