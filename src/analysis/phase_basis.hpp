#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/run_record.hpp"

namespace wattwise::analysis {

// Job-knob sweeps are judged on the work, not the start-up (docs/sweep.md "Judged on the work").
// The phases that are the job's work, in order of preference: the first that every run carries (with a
// time and an energy) is analysed by default. "training" spans all epochs; "epoch" sums them.
inline constexpr std::array<std::string_view, 2> kWorkPhases = {"training", "epoch"};
// The whole run, start-up included: --phase run.
inline constexpr std::string_view kWholeRun = "run";
// Start-up (the run's time outside the work phase) above this share of the run, on average over the
// runs, is warned about: whole-run figures would mostly measure imports and data loading.
inline constexpr double kStartupWarnShare = 0.20;

// What each run's time and energy stand for in an analysis.
struct PhaseBasis {
  std::string phase = std::string(kWholeRun);  // "run", or the phase analysed
  bool automatic = false;                      // chosen by default (kWorkPhases), not by --phase
  std::size_t runs_left_out = 0;               // runs without the phase named by --phase
  // Start-up share of a run (1 - work phase time / run time) over the runs that carry `startup_phase`:
  // absent when no work phase is known (a runs CSV, a job without markers).
  std::string startup_phase;
  std::optional<double> startup_share_mean;
  std::optional<double> startup_share_max;

  bool startup_dominates() const { return startup_share_mean && *startup_share_mean > kStartupWarnShare; }
};

struct PhasedRuns {
  std::vector<RunRecord> runs;  // time_s and energy_j are the phase's where a phase is analysed
  PhaseBasis basis;
};

// `requested`: absent = the default (the first of kWorkPhases that every successful run carries, else the
// whole run); "run" = the whole run; any other name = that phase, summed over its occurrences (runs
// without it are left out and counted). A requested phase that no run carries is a usage_error naming the
// phases there are. Work (J/sample) stays the run's: the samples the job counted, all in its work phase.
PhasedRuns judge_on_phase(const std::vector<RunRecord>& runs, const std::optional<std::string>& requested);

// "judged on phase 'training' (use --phase run for the whole run)", or "judged on the whole run".
std::string basis_text(const PhaseBasis& basis);
// The start-up warning, when startup_dominates(); empty otherwise.
std::string startup_warning(const PhaseBasis& basis);

}  // namespace wattwise::analysis
