// Which SLURM task a process is, from the variables srun and sbatch set, and the file name each task writes.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/error.hpp"
#include "slurm/slurm_task.hpp"

namespace wattwise::slurm {
namespace {

using Variables = std::map<std::string, std::string>;

std::optional<SlurmTask> read(const Variables& variables, const std::string& host = "vm-host") {
  return read_slurm_task(
      [&](const char* name) {
        const auto it = variables.find(name);
        return it == variables.end() ? nullptr : it->second.c_str();
      },
      host);
}

// What slurmstepd gave task 3 (local id 1) of step 2 on node gpu07, as observed under srun on slurm 22.05.
Variables srun_task() {
  return {{"SLURM_JOB_ID", "4711"},      {"SLURM_STEP_ID", "2"},        {"SLURMD_NODENAME", "gpu07"},
          {"SLURM_PROCID", "3"},         {"SLURM_LOCALID", "1"},        {"SLURM_NODEID", "1"},
          {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_NTASKS", "4"},         {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_NNODES", "2"},         {"CUDA_VISIBLE_DEVICES", "1"}, {"SLURM_STEP_GPUS", "1"},
          {"GPU_DEVICE_ORDINAL", "1"}};
}

TEST(SlurmTask, OutsideSlurmThereIsNoTask) {
  EXPECT_FALSE(read({{"CUDA_VISIBLE_DEVICES", "0"}}).has_value());
}

TEST(SlurmTask, ReadsJobStepNodeTaskAndGpusFromSrunsVariables) {
  const auto task = read(srun_task());
  ASSERT_TRUE(task);
  EXPECT_EQ(task->job_id, "4711");
  EXPECT_EQ(task->step_id, "2");
  EXPECT_EQ(task->node, "gpu07");
  EXPECT_EQ(task->task_id, 3);
  EXPECT_EQ(task->local_id, 1);
  EXPECT_EQ(task->node_id, 1);
  EXPECT_EQ(task->tasks, 4);
  EXPECT_EQ(task->nodes, 2);
  EXPECT_EQ(task->cuda_visible_devices, "1");
  EXPECT_EQ(task->step_gpus, "1");
  EXPECT_EQ(task->gpu_device_ordinal, "1");
  EXPECT_FALSE(task->job_gpus);
}

TEST(SlurmTask, TheStepsTaskCountWinsOverTheAllocations) {
  auto variables = srun_task();
  variables["SLURM_STEP_NUM_TASKS"] = "2";  // srun -n2 inside an allocation of 4 tasks
  EXPECT_EQ(read(variables)->tasks, 2);
}

TEST(SlurmTask, TheBatchScriptIsStepBatchOnTheHostName) {
  const auto task = read({{"SLURM_JOB_ID", "9"}, {"SLURM_NTASKS", "8"}}, "node3");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->step_id, "batch");
  EXPECT_EQ(task->node, "node3");
  EXPECT_EQ(task->task_id, 0);
  EXPECT_EQ(task->tasks, 8);
}

TEST(SlurmTask, ANumberVariableThatIsNoNumberIsAUsageErrorNamingIt) {
  auto variables = srun_task();
  variables["SLURM_PROCID"] = "3x";
  try {
    read(variables);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("SLURM_PROCID='3x'"), std::string::npos) << e.what();
  }
}

TEST(SlurmTask, TasksSharingANodeGetDifferentFileNames) {
  auto a = *read(srun_task());
  auto b = a;
  b.task_id = 2;
  b.local_id = 0;
  EXPECT_EQ(result_file_name(a), "job-4711.step-2.gpu07.task-3.json");
  EXPECT_NE(result_file_name(a), result_file_name(b));
}

TEST(SlurmTask, ARequeuedJobsFileNamesItsRestart) {
  auto variables = srun_task();
  variables["SLURM_RESTART_COUNT"] = "1";
  EXPECT_EQ(result_file_name(*read(variables)), "job-4711.step-2.gpu07.task-3.restart-1.json");
}

TEST(SlurmTask, FileNameCharactersOutsideTheSafeSetBecomeUnderscores) {
  auto variables = srun_task();
  variables["SLURMD_NODENAME"] = "../etc/x y";
  const auto name = result_file_name(*read(variables));
  EXPECT_EQ(name.find('/'), std::string::npos) << name;
  EXPECT_EQ(name, "job-4711.step-2..._etc_x_y.task-3.json");
}

TEST(SlurmTask, JsonRoundTripKeepsEveryField) {
  auto variables = srun_task();
  variables["SLURM_RESTART_COUNT"] = "2";
  const auto task = *read(variables);
  const auto back = slurm_task_from_json(to_json(task), "t.json");
  EXPECT_EQ(to_json(back), to_json(task));
  EXPECT_EQ(back.restart_count, 2);
}

TEST(SlurmTask, AJsonWithoutTheTaskIdIsADataErrorNamingTheFile) {
  auto j = to_json(*read(srun_task()));
  j.erase("task_id");
  try {
    slurm_task_from_json(j, "bad.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kData);
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::slurm
