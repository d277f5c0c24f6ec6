// Matching the driver's compute processes per GPU against the job's process tree (a /proc laid out by the
// test), including what cannot be told: no process list, or pids from another pid namespace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "../support/fake_gpu.hpp"
#include "../support/temp_dir.hpp"
#include "measure/gpu_usage_monitor.hpp"

namespace wattwise::measure {
namespace {

using wattwise::testing::FakeGpu;

// What a GPU lists as its compute processes: `pids` (none listed: nullopt, the driver cannot tell).
std::function<std::optional<std::vector<hw::GpuProcess>>()> listing(std::optional<std::vector<int>> pids) {
  return [pids]() -> std::optional<std::vector<hw::GpuProcess>> {
    if (!pids) return std::nullopt;
    std::vector<hw::GpuProcess> out;
    for (int pid : *pids) out.push_back({pid, 100.0});
    return out;
  };
}

// A GPU whose only reading is its list of compute processes.
std::unique_ptr<FakeGpu> process_list_gpu(unsigned index, std::optional<std::vector<int>> pids) {
  auto gpu = std::make_unique<FakeGpu>(index, "GPU-" + std::to_string(index), 300);
  gpu->processes = listing(std::move(pids));
  return gpu;
}

class GpuUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    add(100, 1, 100);  // the job
    add(101, 100, 100);
    add(300, 1, 300);  // another user's job
  }
  void add(int pid, int parent, int group) {
    std::filesystem::create_directories(proc_ / std::to_string(pid));
    std::ofstream(proc_ / std::to_string(pid) / "stat")
        << pid << " (python) S " << parent << " " << group << " " << group << " 0\n";
  }
  // GPU 0 is the job's, GPU 1 is not.
  std::vector<GpuUsage> track(std::vector<hw::GpuReadings*> gpus) {
    std::vector<GpuUsage> skeleton(gpus.size());
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      skeleton[i].gpu = gpus[i]->identity();
      skeleton[i].expected = skeleton[i].measured = i == 0;
    }
    GpuUsageTracker tracker(gpus, skeleton);
    workload::JobProcessTree tree(100, proc_);
    tracker.poll(tree);
    return tracker.result();
  }
  const wattwise::testing::TempDir temp_{"ww-usage"};
  const std::filesystem::path& proc_ = temp_.path();
};

TEST_F(GpuUsageTest, TheJobsChildOnItsGpuIsSeenThereAndOtherUsersAreNotTheJob) {
  auto gpu0 = process_list_gpu(0, std::vector<int>{101, 300});
  auto gpu1 = process_list_gpu(1, std::vector<int>{300});
  const auto usage = track({gpu0.get(), gpu1.get()});
  EXPECT_EQ(usage[0].job_seen, true);
  EXPECT_EQ(usage[0].pids, (std::vector<int>{101}));
  EXPECT_EQ(usage[1].job_seen, false);
  EXPECT_TRUE(usage[1].pids.empty());
}

TEST_F(GpuUsageTest, AJobOnAGpuItWasNotGivenIsSeenThere) {
  auto gpu0 = process_list_gpu(0, std::vector<int>{});
  auto gpu1 = process_list_gpu(1, std::vector<int>{100});
  const auto usage = track({gpu0.get(), gpu1.get()});
  EXPECT_EQ(usage[0].job_seen, false);
  EXPECT_EQ(usage[1].job_seen, true);
  EXPECT_FALSE(usage[1].expected);
}

TEST_F(GpuUsageTest, AGpuThatCannotListProcessesIsUnknown) {
  auto gpu0 = process_list_gpu(0, std::nullopt);
  EXPECT_FALSE(track({gpu0.get()})[0].job_seen.has_value());
}

TEST_F(GpuUsageTest, PidsOfAnotherPidNamespaceMakeAGpuUnknownNotFree) {
  // In a container, the driver may list host pids that name no process here: they could be the job's.
  auto gpu0 = process_list_gpu(0, std::vector<int>{987654});
  EXPECT_FALSE(track({gpu0.get()})[0].job_seen.has_value());
}

TEST_F(GpuUsageTest, AProcessSeenOnceStaysSeenAfterItExits) {
  auto gpu0 = process_list_gpu(0, std::vector<int>{101});
  std::vector<GpuUsage> skeleton(1);
  skeleton[0].gpu = gpu0->identity();
  GpuUsageTracker tracker({gpu0.get()}, skeleton);
  workload::JobProcessTree tree(100, proc_);
  tracker.poll(tree);
  gpu0->processes = listing(std::vector<int>{});
  std::filesystem::remove_all(proc_ / "101");
  tracker.poll(tree);
  EXPECT_EQ(tracker.result()[0].job_seen, true);
  EXPECT_EQ(tracker.result()[0].pids, (std::vector<int>{101}));
}

TEST_F(GpuUsageTest, TheProcessTreeIsWalkedOnlyWhenAGpuListsAPidNotClassifiedYet) {
  // The /proc walk reads every process of the node: in the steady state (the same pids on the GPUs) it
  // is not repeated, and a new pid on a GPU brings it back.
  auto gpu0 = process_list_gpu(0, std::vector<int>{101, 300});
  std::vector<GpuUsage> skeleton(1);
  skeleton[0].gpu = gpu0->identity();
  GpuUsageTracker tracker({gpu0.get()}, skeleton);
  workload::JobProcessTree tree(100, proc_);
  tracker.poll(tree);
  ASSERT_TRUE(tree.contains(101));
  add(102, 100, 100);  // the job starts a worker, not yet on a GPU
  tracker.poll(tree);
  EXPECT_FALSE(tree.contains(102)) << "the tree was walked although the GPU listed only known pids";
  gpu0->processes = listing(std::vector<int>{101, 300, 102});
  tracker.poll(tree);
  EXPECT_TRUE(tree.contains(102));
  EXPECT_EQ(tracker.result()[0].pids, (std::vector<int>{101, 102}));
}

}  // namespace
}  // namespace wattwise::measure
