#include "analysis/phase_basis.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

// The phase as a usable measurement: it ran for some time and its energy is known.
const PhaseRecord* find_phase(const RunRecord& run, std::string_view name) {
  for (const PhaseRecord& phase : run.phases)
    if (phase.name == name && phase.time_s > 0 && phase.energy_j) return &phase;
  return nullptr;
}

bool all_carry(const std::vector<RunRecord>& runs, std::string_view name) {
  bool any = false;
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    if (!find_phase(run, name)) return false;
    any = true;
  }
  return any;
}

std::optional<std::string> default_work_phase(const std::vector<RunRecord>& runs) {
  for (std::string_view name : kWorkPhases)
    if (all_carry(runs, name)) return std::string(name);
  return std::nullopt;
}

std::string phase_names(const std::vector<RunRecord>& runs) {
  std::vector<std::string> names;
  for (const RunRecord& run : runs)
    for (const PhaseRecord& phase : run.phases)
      if (std::find(names.begin(), names.end(), phase.name) == names.end()) names.push_back(phase.name);
  if (names.empty()) return "none";
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

// Start-up share against `phase` over the runs that carry it.
void measure_startup(PhaseBasis& basis, const std::vector<RunRecord>& runs, const std::string& phase) {
  double sum = 0, most = 0;
  int n = 0;
  for (const RunRecord& run : runs) {
    const PhaseRecord* work = run.ok ? find_phase(run, phase) : nullptr;
    if (!work || !(run.time_s > 0)) continue;
    const double share = std::clamp(1 - work->time_s / run.time_s, 0.0, 1.0);
    sum += share;
    most = std::max(most, share);
    ++n;
  }
  if (n == 0) return;
  basis.startup_phase = phase;
  basis.startup_share_mean = sum / n;
  basis.startup_share_max = most;
}

}  // namespace

PhasedRuns judge_on_phase(const std::vector<RunRecord>& runs, const std::optional<std::string>& requested) {
  PhasedRuns result;
  PhaseBasis& basis = result.basis;
  const std::optional<std::string> work_phase = default_work_phase(runs);
  if (!requested) {
    basis.automatic = work_phase.has_value();
    basis.phase = work_phase.value_or(std::string(kWholeRun));
  } else {
    basis.phase = *requested;
  }
  if (basis.phase == kWholeRun) {
    if (work_phase) measure_startup(basis, runs, *work_phase);
    result.runs = runs;
    return result;
  }
  measure_startup(basis, runs, basis.phase);
  for (const RunRecord& run : runs) {
    if (!run.ok) continue;
    const PhaseRecord* phase = find_phase(run, basis.phase);
    if (!phase) {
      ++basis.runs_left_out;
      continue;
    }
    RunRecord judged = run;
    judged.time_s = phase->time_s;
    judged.energy_j = *phase->energy_j;
    judged.energy_uncertainty_j = phase->energy_uncertainty_j;
    judged.node = phase->node;  // the node over the phase's time, where stored
    result.runs.push_back(std::move(judged));
  }
  if (result.runs.empty()) {
    throw usage_error(
        fmt::format("no successful run has a phase named '{}' with a time and an energy "
                    "(phases seen: {}); name one of them, or use --phase run for the whole run",
                    basis.phase, phase_names(runs)));
  }
  return result;
}

std::string basis_text(const PhaseBasis& basis) {
  if (basis.phase == kWholeRun) {
    return basis.startup_phase.empty()
               ? "judged on the whole run"
               : fmt::format(
                     "judged on the whole run, start-up included (drop --phase run to judge on phase "
                     "'{}')",
                     basis.startup_phase);
  }
  return fmt::format("judged on phase '{}'{} (use --phase run for the whole run)", basis.phase,
                     basis.automatic ? ", the job's work" : "");
}

std::string startup_warning(const PhaseBasis& basis) {
  if (!basis.startup_dominates()) return "";
  return fmt::format(
      "start-up (run time outside phase '{}') is {:.0f}% of a run on average (up to {:.0f}%), above {:.0f}%: "
      "{}",
      basis.startup_phase, 100 * *basis.startup_share_mean, 100 * *basis.startup_share_max,
      100 * kStartupWarnShare,
      basis.phase == kWholeRun ? "whole-run figures mostly measure start-up, not the work"
                               : "whole-run figures would mostly measure start-up, so the phase is analysed");
}

}  // namespace wattwise::analysis
