#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/slurm_task.hpp"

// The per-task results of one SLURM job step (each a `wattwise measure` JSON with its `slurm` object, written
// by `measure --out-dir`) gathered into one result: per task, per node and the step's total
// (docs/slurm.md, "Merged JSON"). Works on parsed JSON only: the reading of files is in merge_files.hpp.
namespace wattwise::slurm {

// One task's file, parsed.
struct TaskResult {
  std::string source;          // the file, for messages and the merged `file` field
  SlurmTask task;              // its `slurm` object
  nlohmann::json measurement;  // the whole measure JSON
};

// Reads one task's measure JSON (text already parsed): throws data_error naming `source` when it has no
// `slurm` object (not written under SLURM) or lacks a field the merge needs.
TaskResult task_result(const nlohmann::json& measurement, const std::string& source);

// Which step to merge: every file must be of one job (a usage_error names the jobs found otherwise); of
// several steps, `step` chooses one (without it, a usage_error names the steps found). Two files of the same
// task are a data_error. Returns the chosen files, sorted by task.
std::vector<TaskResult> select_step(std::vector<TaskResult> results, const std::optional<std::string>& step);

// The merged result of one step's tasks (select_step's output). Per node, each GPU (by UUID) is counted once:
// when tasks on a node measured the same GPU (they were not given one GPU each), the node takes it from the
// task that measured it longest, and `warnings` says so.
nlohmann::json merge_step(const std::vector<TaskResult>& results);

}  // namespace wattwise::slurm
