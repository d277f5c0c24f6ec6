#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/phase_basis.hpp"
#include "analysis/run_record.hpp"

namespace wattwise::analysis {

// Whose energy a run's energy is (docs/energy-scope.md): the GPUs the job was given, or the node's (every
// measured GPU, idle ones included, and the CPU packages, DRAM or a meter where they were measured).
enum class EnergyScope { kJob, kNode };

// "job" or "node", as --energy-scope and the JSON spell them.
std::string to_string(EnergyScope scope);
// "job" or "node"; anything else is a usage_error.
EnergyScope parse_energy_scope(const std::string& text);

// What each run's energy stands for in an analysis.
struct ScopeBasis {
  EnergyScope scope = EnergyScope::kJob;
  bool automatic = true;          // the default, not --energy-scope
  bool gpu_count_varies = false;  // the runs gave the job different numbers of GPUs
  bool node_known = false;        // every run has a node figure on the basis analysed
  // The node figure is not the job's GPUs' in some run (idle GPUs, CPU, DRAM or a meter were measured):
  // then both scopes are analysed and shown.
  bool node_differs = false;
  std::vector<std::string>
      node_parts;               // what the node figure adds up: "gpus", "cpu_package", "dram" or "meter"
  unsigned most_idle_gpus = 0;  // the most measured GPUs a run left idle
  std::string note;  // why the default is not the node although the GPU count varies; empty otherwise
};

struct ScopedRuns {
  std::vector<RunRecord> runs;  // energy_j is the scope's
  ScopeBasis basis;
};

// `runs` as judged (judge_on_phase: each run's `node` is the node over the basis analysed). The node figure
// is the same sum for every run: the meter where every run has one (the node at the wall), else every
// measured GPU plus the CPU packages and the DRAM where every run has them. `requested` absent: the node
// when the GPU count varies and every run has a node figure, else the job's GPUs. A requested node scope
// without node figures is a usage_error saying why.
ScopedRuns apply_energy_scope(const std::vector<RunRecord>& runs, std::optional<EnergyScope> requested,
                              const std::string& phase);

// "energy of the node: every measured GPU (idle ones included) + CPU packages, chosen because the GPU count
// varies (--energy-scope job for the job's GPUs alone)"; empty when the scopes do not differ and none was
// asked for, so nothing is said where there is nothing to choose.
std::string scope_text(const ScopeBasis& basis);

}  // namespace wattwise::analysis
