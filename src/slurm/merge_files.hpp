#pragma once

#include <string>
#include <vector>

#include "slurm/merge.hpp"

// Reading the per-task files that `wattwise merge` is given: files, or directories (their *.json files,
// not recursively, as `measure --out-dir` writes them).
namespace wattwise::slurm {

struct ReadResults {
  std::vector<TaskResult> results;
  std::vector<std::string> skipped;  // for stderr: a directory's JSON files that are no task result
};

// A path that does not exist is a usage_error, one that cannot be read an environment_error, a file that is
// not JSON or no task result a data_error (each naming the file). In a directory, JSON files without a
// `slurm` object (a merged result written there, another tool's file) are skipped and listed.
ReadResults read_task_results(const std::vector<std::string>& paths);

}  // namespace wattwise::slurm
