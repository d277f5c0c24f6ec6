#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

// Which SLURM task this process is, read from the variables slurmstepd (srun) and the batch script set.
// Pure: the caller passes how to read a variable and the host name, so tests need no SLURM.
//
// One wattwise per node (`srun --ntasks-per-node=1 wattwise measure -- CMD`, CMD starting the node's ranks)
// and one per rank (`srun wattwise measure -- CMD`, each task measuring the GPUs SLURM gave it in
// CUDA_VISIBLE_DEVICES) are both named by job, step, node and task, so that files never clash.
namespace wattwise::slurm {

struct SlurmTask {
  std::string job_id;                // SLURM_JOB_ID
  std::string step_id;               // SLURM_STEP_ID; "batch" in the batch script itself (not under srun)
  std::string node;                  // SLURMD_NODENAME, else the host name
  int task_id = 0;                   // SLURM_PROCID: the task's rank in the step, unique over its nodes
  int local_id = 0;                  // SLURM_LOCALID: the task's rank on its node
  int node_id = 0;                   // SLURM_NODEID: the node's position in the step
  std::optional<int> tasks;          // SLURM_NTASKS (SLURM_STEP_NUM_TASKS under srun)
  std::optional<int> nodes;          // SLURM_NNODES (SLURM_STEP_NUM_NODES under srun)
  std::optional<int> restart_count;  // SLURM_RESTART_COUNT: a requeued job keeps its id
  // The GPU variables as SLURM set them, kept for the record: the measured GPUs come from
  // CUDA_VISIBLE_DEVICES like any job's (measure/job_gpus.hpp).
  std::optional<std::string> cuda_visible_devices, step_gpus, job_gpus, gpu_device_ordinal;
};

using GetEnv = std::function<const char*(const char*)>;

// nullopt outside SLURM (no SLURM_JOB_ID). A number variable that is not a number is a usage error naming it.
std::optional<SlurmTask> read_slurm_task(const GetEnv& get_env, const std::string& host_name);
// The same, from this process's environment and host name.
std::optional<SlurmTask> current_slurm_task();

// "job-123.step-0.node01.task-3.json" (".restart-1" before ".json" after a requeue): unique per task of a
// step; characters other than letters, digits, '.', '_' and '-' become '_'.
std::string result_file_name(const SlurmTask& task);

nlohmann::json to_json(const SlurmTask& task);
// More tasks or nodes than any SLURM job step has: a file claiming more was not written by wattwise.
inline constexpr int kMaxTasks = 1000000;
// Throws data_error naming `source` and the field when a field is missing, of the wrong type or out of range.
SlurmTask slurm_task_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace wattwise::slurm
