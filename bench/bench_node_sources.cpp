// Cost of one reading of each node source (docs/node-power.md): a powercap zone's energy_uj (here a fake
// tree in a temporary directory: a file read, not the kernel's MSR read behind real sysfs) and one run of
// a meter command (fork/exec of a shell script printing "250 W"). The node thread makes one reading of each
// source per period (1 s by default): its CPU cost per second is the sum of these.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "hw/meter_command.hpp"
#include "hw/powercap.hpp"
#include "sampling/node_sampler.hpp"

namespace {

namespace fs = std::filesystem;

fs::path fake_tree() {
  const fs::path root = fs::temp_directory_path() / ("ww-bench-powercap-" + std::to_string(::getpid()));
  for (const char* id : {"intel-rapl:0", "intel-rapl:0/intel-rapl:0:0"}) {
    fs::create_directories(root / id);
    std::ofstream(root / id / "name") << (fs::path(id).filename() == "intel-rapl:0" ? "package-0" : "dram");
    std::ofstream(root / id / "energy_uj") << "123456789\n";
    std::ofstream(root / id / "max_energy_range_uj") << "262143328850\n";
  }
  return root;
}

void BM_PowercapRead(benchmark::State& state) {
  const fs::path root = fake_tree();
  wattwise::hw::PowercapSource source(wattwise::hw::discover_powercap(root).zones.at(0));
  for (auto _ : state) benchmark::DoNotOptimize(source.read());
  fs::remove_all(root);
}
BENCHMARK(BM_PowercapRead);

// One node tick with a package and a DRAM zone (what the thread does each period without a meter).
void BM_NodeTickTwoZones(benchmark::State& state) {
  const fs::path root = fake_tree();
  wattwise::MonotonicClock clock;
  wattwise::sampling::NodeSampler sampler(
      wattwise::hw::powercap_sources(wattwise::hw::discover_powercap(root)), clock);
  for (auto _ : state) sampler.read_all();
  fs::remove_all(root);
}
BENCHMARK(BM_NodeTickTwoZones)->Iterations(100000);

// Wall time matters here too: the command runs in a child, whose CPU getrusage(RUSAGE_SELF) does not see.
void BM_MeterCommandRead(benchmark::State& state) {
  wattwise::hw::MeterCommand meter({WATTWISE_BENCH_METER});
  for (auto _ : state) benchmark::DoNotOptimize(meter.read());
}
BENCHMARK(BM_MeterCommandRead)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
