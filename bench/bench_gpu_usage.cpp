// The CPU cost of finding where the job runs (docs/multi-gpu.md, "Where the job was seen"): one look at
// /proc for the job's process tree, and one poll of N GPUs' process lists matched against it. The GPUs here
// answer at once, so this is wattwise's own share; the driver's time for
// nvmlDeviceGetComputeRunningProcesses_v3 comes on top and is measured on a GPU machine, not here.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include "../tests/support/readings_only_gpu.hpp"
#include "measure/gpu_usage_monitor.hpp"

namespace {

using namespace wattwise;

// A GPU with two compute processes, one of them this process (so the match succeeds).
class ListingGpu final : public wattwise::testing::ReadingsOnlyGpu {
 public:
  explicit ListingGpu(unsigned index) { id_.index = index; }
  std::optional<std::vector<hw::GpuProcess>> compute_processes() override {
    return std::vector<hw::GpuProcess>{{static_cast<int>(::getpid()), 512.0}, {1, 512.0}};
  }
  const hw::GpuIdentity& identity() const override { return id_; }
  hw::Capabilities capabilities() override { return {}; }
  std::optional<std::uint64_t> energy_mj() override { return std::nullopt; }
  std::optional<double> power_instant_w() override { return std::nullopt; }
  std::optional<double> power_average_w() override { return std::nullopt; }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t) override { return {}; }
  hw::Telemetry telemetry() override { return {}; }

 private:
  hw::GpuIdentity id_;
};

void BM_ProcessTreeRefresh(benchmark::State& state) {
  workload::JobProcessTree tree(::getpid());
  for (auto _ : state) tree.refresh();
  state.counters["processes_on_host"] = static_cast<double>(
      std::distance(std::filesystem::directory_iterator("/proc"), std::filesystem::directory_iterator()));
}
BENCHMARK(BM_ProcessTreeRefresh)->Unit(benchmark::kMicrosecond);

void BM_GpuUsagePoll(benchmark::State& state) {
  std::vector<ListingGpu> gpus;
  for (unsigned i = 0; i < state.range(0); ++i) gpus.emplace_back(i);
  std::vector<hw::GpuReadings*> pointers;
  std::vector<measure::GpuUsage> skeleton(gpus.size());
  for (auto& g : gpus) pointers.push_back(&g);
  measure::GpuUsageTracker tracker(pointers, skeleton);
  workload::JobProcessTree tree(::getpid());
  for (auto _ : state) tracker.poll(tree);
}
BENCHMARK(BM_GpuUsagePoll)->Arg(1)->Arg(2)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
