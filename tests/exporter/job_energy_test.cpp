#include "exporter/job_energy.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "../support/temp_dir.hpp"
#include "core/text.hpp"

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

JobId slurm(std::string id) {
  return {std::move(id), JobSource::kScheduler};
}
JobId user(std::string id) {
  return {std::move(id), JobSource::kUser};
}

// Issue 22, item 3: any user could set WATTWISE_JOB_ID to book energy to any job. The scheduler's id
// wins, and the user-set one is marked as such.
TEST(HostileJobIds, TheSchedulersJobIdWinsOverTheUserSetOne) {
  EXPECT_EQ(job_id_from("", "PATH=/bin\0SLURM_JOB_ID=4242\0WATTWISE_JOB_ID=train-7\0"s), slurm("4242"));
  EXPECT_EQ(job_id_from("", "PATH=/bin\0WATTWISE_JOB_ID=train-7\0"s), user("train-7"));
}

// A process in a SLURM job's cgroup cannot leave it; its environment says what the user wants.
TEST(HostileJobIds, TheJobsCgroupWinsOverItsEnvironment) {
  EXPECT_EQ(job_id_from("0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n",
                        "SLURM_JOB_ID=4242\0WATTWISE_JOB_ID=x\0"s),
            slurm("77"));
  EXPECT_EQ(job_id_from("12:cpuset:/slurm/uid_1000/job_78/step_batch\n", ""), slurm("78"));
  // Not a job directory: job_ followed by something else, or no number.
  EXPECT_EQ(job_id_from("0::/user.slice/job_x/job_/myjob_5\n", "WATTWISE_JOB_ID=u\0"s), user("u"));
}

TEST(JobId, NoJobVariableMeansNoJob) {
  EXPECT_EQ(job_id_from("", "PATH=/bin\0SLURM_JOB_IDX=1\0XSLURM_JOB_ID=2\0SLURM_JOB_ID=\0"s), std::nullopt);
  EXPECT_EQ(job_id_from("", ""), std::nullopt);
}

// The issue: a non-ASCII id cut mid-character at 64 bytes, or one with invalid UTF-8, made Prometheus
// refuse the node's whole scrape.
TEST(HostileJobIds, LongIdsAreCutAtACharacterBoundaryAndBadBytesRepaired) {
  std::string accented = "a";
  for (int i = 0; i < 40; ++i) accented += "\xc3\xa9";  // é: the 64-byte cut falls inside one
  const auto cut = job_id_from("", "WATTWISE_JOB_ID=" + accented);
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->id.size(), 63u);
  EXPECT_TRUE(is_valid_utf8(cut->id));
  EXPECT_EQ(job_id_from("", "SLURM_JOB_ID=12\xff\xfe"s), slurm("12\xef\xbf\xbd\xef\xbf\xbd"));
  EXPECT_EQ(job_id_from("", "WATTWISE_JOB_ID=" + std::string(300, 'j')), user(std::string(kMaxJobIdBytes, 'j')));
}

TEST(JobId, ReadsTheProcessEnvironmentAndCgroupUnderTheProcRoot) {
  const wattwise::testing::TempDir temp("wattwise-proc");
  const std::filesystem::path& proc = temp.path();
  std::filesystem::create_directories(proc / "123");
  std::ofstream(proc / "123" / "environ", std::ios::binary) << "HOME=/root\0SLURM_JOB_ID=99\0"s;
  EXPECT_EQ(job_id_of_process(123, proc), slurm("99"));
  std::ofstream(proc / "123" / "cgroup") << "0::/slurm/uid_0/job_100/step_0\n";
  EXPECT_EQ(job_id_of_process(123, proc), slurm("100"));
  EXPECT_EQ(job_id_of_process(124, proc), std::nullopt);  // gone
  EXPECT_EQ(job_id_of_process(0, proc), std::nullopt);
}

TEST(JobEnergy, SplitsASharedGpuEvenlyAndCountsDuplicatesOnce) {
  JobEnergy jobs;
  jobs.add({user("a"), user("b"), user("a")}, 100, 1s);
  jobs.add({user("a")}, 30, 2s);
  const auto list = jobs.jobs();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].job, user("a"));  // most recently seen first
  EXPECT_DOUBLE_EQ(list[0].energy_j, 80);
  EXPECT_DOUBLE_EQ(list[1].energy_j, 50);
}

// A job's bar: the shares of the GPUs' grown bars, and its first and latest polls' energy whole (a job is
// resolved to the poll: it may have started or ended anywhere inside them).
TEST(JobEnergy, CarriesTheGrownBarsAndItsFirstAndLatestPolls) {
  JobEnergy jobs;
  jobs.add({user("a")}, 10, 1s, 1);  // two GPUs polled at one instant: one poll
  jobs.add({user("a"), user("b")}, 20, 1s, 2);
  jobs.add({user("a")}, 30, 2s, 1);
  jobs.add({user("a")}, 40, 3s, 1);
  const auto list = jobs.jobs();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_DOUBLE_EQ(list[0].energy_j, 10 + 10 + 30 + 40);
  EXPECT_DOUBLE_EQ(list[0].uncertainty_j, (1 + 1 + 1 + 1) + (10 + 10) + 40);
  EXPECT_DOUBLE_EQ(list[1].uncertainty_j, 1 + 10);  // seen once: that poll's share, once
}

TEST(JobEnergy, NoJobOnTheGpuAttributesNothing) {
  JobEnergy jobs;
  jobs.add({}, 100, 1s);
  EXPECT_TRUE(jobs.jobs().empty());
}

TEST(JobEnergy, KeepsAtMostMaxJobsDroppingTheLeastRecentlySeen) {
  JobEnergy jobs(3);
  jobs.add({slurm("old")}, 1, 1s);
  jobs.add({slurm("mid")}, 1, 2s);
  jobs.add({slurm("new")}, 1, 3s);
  jobs.add({slurm("old")}, 1, 4s);     // seen again: now the most recent
  jobs.add({slurm("newest")}, 1, 5s);  // pushes out "mid", the least recently seen
  const auto list = jobs.jobs();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].job, slurm("newest"));
  EXPECT_EQ(list[1].job, slurm("old"));
  EXPECT_EQ(list[2].job, slurm("new"));
  EXPECT_EQ(jobs.evicted(JobSource::kScheduler), 1u);
}

// The issue: any user could churn the 16 job slots with made-up WATTWISE_JOB_IDs and push the real jobs
// out. User-set ids now take only their own slots.
TEST(HostileJobIds, UserSetIdsCannotPushOutTheSchedulersJobs) {
  JobEnergy jobs(2);
  jobs.add({slurm("1")}, 10, 1s);
  jobs.add({slurm("2")}, 10, 2s);
  for (int i = 0; i < 100; ++i) jobs.add({user("churn-" + std::to_string(i))}, 1, std::chrono::seconds(3 + i));
  std::vector<JobId> scheduler;
  for (const auto& job : jobs.jobs())
    if (job.job.source == JobSource::kScheduler) scheduler.push_back(job.job);
  EXPECT_EQ(scheduler.size(), 2u);
  EXPECT_EQ(jobs.evicted(JobSource::kScheduler), 0u);
  EXPECT_EQ(jobs.evicted(JobSource::kUser), 98u);
  EXPECT_EQ(jobs.jobs().size(), 4u);
}

TEST(JobEnergy, TheSameIdFromBothSourcesIsTwoJobs) {
  JobEnergy jobs;
  jobs.add({slurm("7"), user("7")}, 10, 1s);
  EXPECT_EQ(jobs.jobs().size(), 2u);
}

}  // namespace
}  // namespace wattwise::exporter
