// The CPU cost of finding where the job runs (docs/multi-gpu.md, "Where the job was seen"): one look at
// /proc for the job's process tree, and one poll of N GPUs' process lists matched against it. The GPUs here
// answer at once, so this is wattwise's own share; the driver's time for
// nvmlDeviceGetComputeRunningProcesses_v3 comes on top and is measured on a GPU machine, not here.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../tests/support/fake_gpu.hpp"
#include "measure/gpu_usage_monitor.hpp"

namespace {

using namespace wattwise;

// A GPU with two compute processes, one of them this process (so the match succeeds).
std::unique_ptr<wattwise::testing::FakeGpu> listing_gpu(unsigned index) {
  auto gpu = std::make_unique<wattwise::testing::FakeGpu>(index, "GPU-" + std::to_string(index), 300);
  gpu->processes = [] {
    return std::optional(std::vector<hw::GpuProcess>{{static_cast<int>(::getpid()), 512.0}, {1, 512.0}});
  };
  return gpu;
}

void BM_ProcessTreeRefresh(benchmark::State& state) {
  workload::JobProcessTree tree(::getpid());
  for (auto _ : state) tree.refresh();
  state.counters["processes_on_host"] = static_cast<double>(
      std::distance(std::filesystem::directory_iterator("/proc"), std::filesystem::directory_iterator()));
}
BENCHMARK(BM_ProcessTreeRefresh)->Unit(benchmark::kMicrosecond);

void BM_GpuUsagePoll(benchmark::State& state) {
  std::vector<std::unique_ptr<wattwise::testing::FakeGpu>> gpus;
  for (unsigned i = 0; i < state.range(0); ++i) gpus.push_back(listing_gpu(i));
  std::vector<hw::GpuReadings*> pointers;
  std::vector<measure::GpuUsage> skeleton(gpus.size());
  for (auto& g : gpus) pointers.push_back(g.get());
  measure::GpuUsageTracker tracker(pointers, skeleton);
  workload::JobProcessTree tree(::getpid());
  for (auto _ : state) tracker.poll(tree);
}
BENCHMARK(BM_GpuUsagePoll)->Arg(1)->Arg(2)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
