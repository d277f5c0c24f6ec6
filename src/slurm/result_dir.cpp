#include "slurm/result_dir.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::slurm {

std::filesystem::path prepare_result_path(const std::string& dir, const SlurmTask& task) {
  namespace fs = std::filesystem;
  if (dir.empty()) throw usage_error("--out-dir '': give a directory (it is created if missing)");
  std::error_code error;
  fs::create_directories(dir, error);
  // Another task of the step may have created it between our check and our mkdir: only its absence counts.
  if (!fs::is_directory(dir))
    throw environment_error(fmt::format("cannot create --out-dir '{}' ({}): choose a writable directory", dir,
                                        error ? error.message() : "a file of that name is in the way"));
  const fs::path path = fs::path(dir) / result_file_name(task);
  if (fs::exists(path, error))
    throw usage_error(
        fmt::format("'{}' exists: job {} step {} task {} was measured into this --out-dir "
                    "already; choose another directory (nothing was overwritten)",
                    path.string(), task.job_id, task.step_id, task.task_id));
  return path;
}

}  // namespace wattwise::slurm
