#include "analysis/energy_scope.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

// Node figures that differ from the job's GPUs' by less than this share are the same figure (the job's
// phase energy and the node's are cut from the same traces over the same spans).
constexpr double kSameEnergyShare = 1e-3;

bool has(const std::vector<std::string>& parts, const char* part) {
  return std::find(parts.begin(), parts.end(), part) != parts.end();
}

// The parts every run has, as the node figure sums them: the meter alone where every run has one.
std::vector<std::string> common_parts(const std::vector<RunRecord>& runs) {
  bool meter = !runs.empty(), gpus = !runs.empty(), cpu = !runs.empty(), dram = !runs.empty();
  for (const RunRecord& run : runs) {
    meter = meter && run.node && run.node->meter_j;
    gpus = gpus && run.node && run.node->gpus_j;
    cpu = cpu && run.node && run.node->cpu_package_j;
    dram = dram && run.node && run.node->dram_j;
  }
  if (meter) return {"meter"};
  if (!gpus) return {};
  std::vector<std::string> parts = {"gpus"};
  if (cpu) parts.emplace_back("cpu_package");
  if (dram) parts.emplace_back("dram");
  return parts;
}

double node_total(const NodeParts& node, const std::vector<std::string>& parts) {
  if (has(parts, "meter")) return *node.meter_j;
  double total = *node.gpus_j;
  if (has(parts, "cpu_package")) total += *node.cpu_package_j;
  if (has(parts, "dram")) total += *node.dram_j;
  return total;
}

std::string parts_text(const std::vector<std::string>& parts) {
  if (has(parts, "meter")) return "the meter, the node at the wall";
  std::string text = "every measured GPU, idle ones included";
  if (has(parts, "cpu_package")) text += ", + CPU packages";
  if (has(parts, "dram")) text += " + DRAM";
  return text;
}

std::string basis_name(const std::string& phase) {
  return phase == kWholeRun ? std::string("over each run") : fmt::format("over phase '{}'", phase);
}

// Why runs lack a node figure on this basis, and what to do.
std::string missing_reason(const std::string& phase) {
  return phase == kWholeRun ? "a runs CSV or a multi-node sweep has no per-GPU figures"
                            : "a database written before wattwise stored the node per phase: try --phase run";
}

}  // namespace

std::string to_string(EnergyScope scope) {
  return scope == EnergyScope::kNode ? "node" : "job";
}

EnergyScope parse_energy_scope(const std::string& text) {
  if (text == "job") return EnergyScope::kJob;
  if (text == "node") return EnergyScope::kNode;
  throw usage_error(fmt::format(
      "--energy-scope '{}': give job (the GPUs the job was given) or node (every measured GPU and the "
      "node's CPU, DRAM or meter)",
      text));
}

ScopedRuns apply_energy_scope(const std::vector<RunRecord>& runs, std::optional<EnergyScope> requested,
                              const std::string& phase) {
  ScopedRuns result;
  ScopeBasis& basis = result.basis;
  std::optional<unsigned> first_count;
  for (const RunRecord& run : runs) {
    if (!run.job_gpus) continue;
    if (first_count && *first_count != *run.job_gpus) basis.gpu_count_varies = true;
    first_count = run.job_gpus;
    if (run.measured_gpus && *run.measured_gpus > *run.job_gpus)
      basis.most_idle_gpus = std::max(basis.most_idle_gpus, *run.measured_gpus - *run.job_gpus);
  }
  basis.node_parts = common_parts(runs);
  basis.node_known = !basis.node_parts.empty();
  if (basis.node_known) {
    for (const RunRecord& run : runs) {
      const double node = node_total(*run.node, basis.node_parts);
      if (std::abs(node - run.energy_j) > kSameEnergyShare * std::max(std::abs(run.energy_j), 1e-9))
        basis.node_differs = true;
    }
  }
  basis.automatic = !requested;
  if (requested) {
    basis.scope = *requested;
  } else {
    basis.scope = basis.gpu_count_varies && basis.node_known ? EnergyScope::kNode : EnergyScope::kJob;
  }
  if (basis.scope == EnergyScope::kNode && !basis.node_known) {
    throw usage_error(fmt::format("--energy-scope node: the runs carry no node energy {} ({})",
                                  basis_name(phase), missing_reason(phase)));
  }
  if (!requested && basis.gpu_count_varies && !basis.node_known) {
    basis.note = fmt::format(
        "the GPU count varies, but the runs carry no node energy {} ({}): judged on the job's GPUs alone, "
        "which leaves out what idle GPUs drew",
        basis_name(phase), missing_reason(phase));
  }
  result.runs = runs;
  if (basis.scope == EnergyScope::kNode)
    for (RunRecord& run : result.runs) {
      run.energy_j = node_total(*run.node, basis.node_parts);
      run.energy_uncertainty_j.reset();  // the bar is the job's GPUs' (idle GPUs and node sources have none)
    }
  return result;
}

std::string scope_text(const ScopeBasis& basis) {
  if (basis.scope == EnergyScope::kNode) {
    return fmt::format("energy of the node ({}){}", parts_text(basis.node_parts),
                       basis.automatic
                           ? ", the default where the GPU count varies (--energy-scope job for the "
                             "job's GPUs alone)"
                           : "");
  }
  if (!basis.note.empty()) return "energy of the job's GPUs: " + basis.note;
  if (!basis.node_differs && basis.automatic) return "";
  return fmt::format("energy of the job's GPUs{}",
                     basis.node_known ? fmt::format(" (--energy-scope node for the node's: {})",
                                                    parts_text(basis.node_parts))
                                      : std::string());
}

}  // namespace wattwise::analysis
