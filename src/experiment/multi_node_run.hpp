#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"
#include "plan/plan.hpp"
#include "slurm/merge.hpp"
#include "store/results_store.hpp"

// `wattwise sweep --slurm` (docs/slurm.md, "Multi-node sweeps"): inside an allocation, each run of the plan
// is one srun step with one wattwise agent per node (`measure --power-limit W --out-dir DIR -- CMD`): each
// agent locks, journals, watches, sets and restores its own node's GPUs, and writes its node's result. The
// sweep changes no setting itself; it launches the step, merges its nodes' results (slurm::merge_step)
// and stores them as one run with per-node and total energy.
namespace wattwise::experiment {

// The job knob that gives a run's node count (srun --nodes).
inline constexpr const char* kNodesKnob = "nodes";

struct MultiNodeOptions {
  std::string srun = "srun";            // looked up in PATH
  std::filesystem::path wattwise;       // the agent's binary, at the same path on every node
  std::filesystem::path runs_dir;       // each run's node results go to a directory under it
  std::vector<std::string> srun_args;   // added before the agent (e.g. --gpus-per-node=4)
  std::vector<std::string> agent_args;  // measure flags for every agent (--interval, --timeout, ...)
  std::vector<std::string> command;     // the job, with {knob} placeholders
};

// The srun command line of one run: `srun [--nodes=N] --ntasks-per-node=1 --kill-on-bad-exit=1
// SRUN_ARGS WATTWISE measure --no-status --out-dir DIR [--power-limit W] [--sm-clock
// MHz] [--mem-clock MHz] AGENT_ARGS -- COMMAND`. One task per node: the agent owns the node's GPUs. A
// node's agent that dies (or fails to set its GPUs) ends the step (--kill-on-bad-exit), so no node runs
// its part of the job at another setting than the others.
std::vector<std::string> srun_argv(const MultiNodeOptions& options, const plan::PlannedRun& run,
                                   const std::filesystem::path& out_dir);

// The database row of one multi-node run: the merged step's total energy, the longest node's time and
// per-node figures (store::ClusterNodeEnergy, with each GPU's enforced power limit from its agent's
// `settings`). `srun_exit_code`: srun's status (128+N: killed by signal N). A node without a result, a
// node's incomplete measurement and a node whose agent could not restore make the run a failed one.
store::RunRecord multi_node_record(const plan::PlannedRun& run, const std::vector<slurm::TaskResult>& results,
                                   int srun_exit_code, const std::string& started_at,
                                   const std::string& ended_at);

// The run function for SweepOptions::run_elsewhere: launches the step, waits (a stop signal to the sweep
// reaches every agent as SIGTERM through `scancel --signal=TERM`: each stops its job and restores), reads the
// nodes' files from a fresh directory under runs_dir, and returns the run's row.
std::function<store::RunRecord(const plan::PlannedRun&)> multi_node_runs(MultiNodeOptions options);

// The sweep's own host in a multi-node sweep: it neither reads nor sets a GPU (the agents do).
class NoLocalGpus final : public hw::GpuSystem {
 public:
  std::string driver_version() override { return "n/a"; }
  std::string backend() const override { return "slurm"; }
  std::size_t count() const override { return 0; }
  hw::GpuReadings& gpu(std::size_t index) override;
};

}  // namespace wattwise::experiment
