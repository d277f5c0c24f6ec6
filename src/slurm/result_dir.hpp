#pragma once

#include <filesystem>
#include <string>

#include "slurm/slurm_task.hpp"

namespace wattwise::slurm {

// Where `measure --out-dir DIR` writes this task's result: DIR/result_file_name(task). Creates DIR (every
// task of a step may race to create it: one that finds it made is content). Called before the job starts, so
// a bad directory fails first: an unwritable one is an environment_error, a result already there (the same
// job, step and task measured twice into one directory) a usage_error, nothing being overwritten.
std::filesystem::path prepare_result_path(const std::string& dir, const SlurmTask& task);

}  // namespace wattwise::slurm
