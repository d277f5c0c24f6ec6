#include "exporter/job_energy.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

namespace wattwise::exporter {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

TEST(JobId, WattwiseJobIdWinsOverSlurmJobId) {
  EXPECT_EQ(job_id_from_environ("PATH=/bin\0SLURM_JOB_ID=4242\0WATTWISE_JOB_ID=train-7\0"s), "train-7");
  EXPECT_EQ(job_id_from_environ("PATH=/bin\0SLURM_JOB_ID=4242\0"s), "4242");
}

TEST(JobId, NoJobVariableMeansNoJob) {
  EXPECT_EQ(job_id_from_environ("PATH=/bin\0SLURM_JOB_IDX=1\0XSLURM_JOB_ID=2\0SLURM_JOB_ID=\0"s),
            std::nullopt);
  EXPECT_EQ(job_id_from_environ(""), std::nullopt);
}

TEST(JobId, LongJobIdsAreCut) {
  const std::string id(300, 'j');
  EXPECT_EQ(job_id_from_environ("WATTWISE_JOB_ID=" + id), std::string(kMaxJobIdBytes, 'j'));
}

TEST(JobId, ReadsTheProcessEnvironmentUnderTheProcRoot) {
  std::string pattern = (std::filesystem::temp_directory_path() / "wattwise-proc-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path proc = pattern;
  std::filesystem::create_directories(proc / "123");
  std::ofstream(proc / "123" / "environ", std::ios::binary) << "HOME=/root\0SLURM_JOB_ID=99\0"s;
  EXPECT_EQ(job_id_of_process(123, proc), "99");
  EXPECT_EQ(job_id_of_process(124, proc), std::nullopt);  // gone
  EXPECT_EQ(job_id_of_process(0, proc), std::nullopt);
  std::filesystem::remove_all(proc);
}

TEST(JobEnergy, SplitsASharedGpuEvenlyAndCountsDuplicatesOnce) {
  JobEnergy jobs;
  jobs.add({"a", "b", "a"}, 100, 1s);
  jobs.add({"a"}, 30, 2s);
  const auto list = jobs.jobs();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "a");  // most recently seen first
  EXPECT_DOUBLE_EQ(list[0].energy_j, 80);
  EXPECT_DOUBLE_EQ(list[1].energy_j, 50);
}

TEST(JobEnergy, NoJobOnTheGpuAttributesNothing) {
  JobEnergy jobs;
  jobs.add({}, 100, 1s);
  EXPECT_TRUE(jobs.jobs().empty());
}

TEST(JobEnergy, KeepsAtMostMaxJobsDroppingTheLeastRecentlySeen) {
  JobEnergy jobs(3);
  jobs.add({"old"}, 1, 1s);
  jobs.add({"mid"}, 1, 2s);
  jobs.add({"new"}, 1, 3s);
  jobs.add({"old"}, 1, 4s);     // seen again: now the most recent
  jobs.add({"newest"}, 1, 5s);  // pushes out "mid", the least recently seen
  const auto list = jobs.jobs();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "newest");
  EXPECT_EQ(list[1].id, "old");
  EXPECT_EQ(list[2].id, "new");
  EXPECT_EQ(jobs.evicted(), 1u);
}

}  // namespace
}  // namespace wattwise::exporter
