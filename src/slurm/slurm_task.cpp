#include "slurm/slurm_task.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::slurm {

namespace {

std::optional<std::string> text(const GetEnv& get_env, const char* name) {
  const char* value = get_env(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::optional<int> number(const GetEnv& get_env, const char* name) {
  const auto value = text(get_env, name);
  if (!value) return std::nullopt;
  const auto parsed = parse_integer<int>(*value);
  if (!parsed || *parsed < 0)
    throw usage_error(
        fmt::format("{}='{}' is not a task or node count: wattwise reads SLURM's own "
                    "variables, do not set them by hand",
                    name, *value));
  return parsed;
}

// The step's own figure under srun, else the allocation's (in the batch script).
std::optional<int> first_number(const GetEnv& get_env, const char* step_name, const char* job_name) {
  if (auto step = number(get_env, step_name)) return step;
  return number(get_env, job_name);
}

std::string safe_for_file_name(const std::string& value) {
  std::string out = value;
  for (char& c : out) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!keep) c = '_';
  }
  return out;
}

template <typename T>
std::optional<T> optional_field(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

std::optional<SlurmTask> read_slurm_task(const GetEnv& get_env, const std::string& host_name) {
  const auto job_id = text(get_env, "SLURM_JOB_ID");
  if (!job_id) return std::nullopt;
  SlurmTask task;
  task.job_id = *job_id;
  task.step_id = text(get_env, "SLURM_STEP_ID").value_or("batch");
  task.node = text(get_env, "SLURMD_NODENAME").value_or(host_name);
  task.task_id = number(get_env, "SLURM_PROCID").value_or(0);
  task.local_id = number(get_env, "SLURM_LOCALID").value_or(0);
  task.node_id = number(get_env, "SLURM_NODEID").value_or(0);
  task.tasks = first_number(get_env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS");
  task.nodes = first_number(get_env, "SLURM_STEP_NUM_NODES", "SLURM_NNODES");
  task.restart_count = number(get_env, "SLURM_RESTART_COUNT");
  task.cuda_visible_devices = text(get_env, "CUDA_VISIBLE_DEVICES");
  task.step_gpus = text(get_env, "SLURM_STEP_GPUS");
  task.job_gpus = text(get_env, "SLURM_JOB_GPUS");
  task.gpu_device_ordinal = text(get_env, "GPU_DEVICE_ORDINAL");
  return task;
}

std::optional<SlurmTask> current_slurm_task() {
  std::array<char, HOST_NAME_MAX + 1> host{};
  if (gethostname(host.data(), host.size()) != 0) host[0] = '\0';
  host.back() = '\0';
  return read_slurm_task([](const char* name) { return std::getenv(name); }, host.data());
}

std::string result_file_name(const SlurmTask& task) {
  std::string name =
      fmt::format("job-{}.step-{}.{}.task-{}", task.job_id, task.step_id, task.node, task.task_id);
  if (task.restart_count && *task.restart_count > 0) name += fmt::format(".restart-{}", *task.restart_count);
  return safe_for_file_name(name) + ".json";
}

nlohmann::json to_json(const SlurmTask& task) {
  return {{"job_id", task.job_id},
          {"step_id", task.step_id},
          {"node", task.node},
          {"task_id", task.task_id},
          {"local_id", task.local_id},
          {"node_id", task.node_id},
          {"tasks", optional_json(task.tasks)},
          {"nodes", optional_json(task.nodes)},
          {"restart_count", optional_json(task.restart_count)},
          {"cuda_visible_devices", optional_json(task.cuda_visible_devices)},
          {"step_gpus", optional_json(task.step_gpus)},
          {"job_gpus", optional_json(task.job_gpus)},
          {"gpu_device_ordinal", optional_json(task.gpu_device_ordinal)}};
}

SlurmTask slurm_task_from_json(const nlohmann::json& j, const std::string& source) {
  try {
    // A merge lists the tasks without a result: a count from a hostile file must not make it list billions.
    for (const auto& [field, min] :
         {std::pair{"tasks", 1}, {"nodes", 1}, {"task_id", 0}, {"local_id", 0}, {"node_id", 0}}) {
      if (!j.is_object() || !j.contains(field) || j.at(field).is_null()) continue;
      const auto& value = j.at(field);
      if (!value.is_number_integer() || value.get<std::int64_t>() < min ||
          value.get<std::int64_t>() > kMaxTasks)
        throw data_error(
            fmt::format("{}: slurm.{} {}is not a task or node number ({} to {}): was it written "
                        "by `wattwise measure` under srun?",
                        source, field, value.is_number_integer() ? value.dump() + " " : "", min, kMaxTasks));
    }
    SlurmTask task;
    task.job_id = j.at("job_id").get<std::string>();
    task.step_id = j.at("step_id").get<std::string>();
    task.node = j.at("node").get<std::string>();
    task.task_id = j.at("task_id").get<int>();
    task.local_id = j.at("local_id").get<int>();
    task.node_id = j.at("node_id").get<int>();
    task.tasks = optional_field<int>(j, "tasks");
    task.nodes = optional_field<int>(j, "nodes");
    task.restart_count = optional_field<int>(j, "restart_count");
    task.cuda_visible_devices = optional_field<std::string>(j, "cuda_visible_devices");
    task.step_gpus = optional_field<std::string>(j, "step_gpus");
    task.job_gpus = optional_field<std::string>(j, "job_gpus");
    task.gpu_device_ordinal = optional_field<std::string>(j, "gpu_device_ordinal");
    return task;
  } catch (const nlohmann::json::exception& e) {
    throw data_error(
        fmt::format("{}: its 'slurm' object is not wattwise's ({}): was it written by `wattwise "
                    "measure` under srun?",
                    source, e.what()));
  }
}

}  // namespace wattwise::slurm
