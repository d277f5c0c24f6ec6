// What the sampler costs: CPU seconds per GPU-second of the real sampler and driver against 1, 2 and 8 fake
// GPUs (tests/fake_nvml) whose calls burn the CPU that the H100's do, and the memory its kept trace grows by
// over a simulated day. One command (from a Release build):
//
//   build/bench/bench_sampler_cpu --seconds 25 --gpus 1,2,8 --sim-hours 24
//
// The call costs are those measured on an H100 (shared/reference/nvml-h100.md): an energy read 3970 us of
// CPU, the field-values read of instantaneous power 6 us, the averaged power 2 us, a PCIe-throughput read
// 907 us (its 21 ms of wall time is not modelled; the sampler reads it only with a pcie_period); the other
// calls (buffered samples, clocks, utilisation, temperature, ...) are given 20 us each (1.5 us on the H100).
// Each GPU count prints the sampler's own breakdown by call kind (Sampler::cost, as in measure --json), and
// the memory part keeps a simulated day twice: as before (every reading) and as now (defaults).
// CPU comes from getrusage(RUSAGE_SELF) around the measurement: the whole process, fake driver included.
#include <sys/resource.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../tests/support/fake_gpu.hpp"
#include "core/clock.hpp"
#include "fake_nvml_bench_config.hpp"
#include "hw/nvml_library.hpp"
#include "hw/nvml_system.hpp"
#include "sampling/sampler.hpp"
#include "sampling/sampler_cost.hpp"
#include "sampling/threaded_driver.hpp"
#include "sampling/virtual_driver.hpp"

namespace {

using wattwise::bench::write_fake_config;

using namespace wattwise;
using namespace std::chrono_literals;

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

double max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Bytes the kept trace's readings take (element counts times element sizes), and with `capacity` the bytes
// its vectors hold (their slack included: what the process really keeps).
template <typename V>
std::size_t held_bytes(const V& v, bool capacity) {
  return (capacity ? v.capacity() : v.size()) * sizeof(typename V::value_type);
}
std::size_t trace_bytes(const sampling::GpuTrace& trace, bool capacity) {
  return held_bytes(trace.energy, capacity) + held_bytes(trace.power_instant, capacity) +
         held_bytes(trace.power_average, capacity) + held_bytes(trace.power_samples, capacity) +
         held_bytes(trace.telemetry, capacity);
}
std::size_t trace_bytes(const sampling::GpuTrace& trace) {
  return trace_bytes(trace, false);
}

struct CpuResult {
  unsigned gpus = 0;
  double wall_s = 0;
  double cpu_s = 0;
  double sampling_thread_cpu_s = 0;
  double counter_reads_per_gpu_s = 0;
  double trace_bytes_per_gpu_h = 0;
  std::uint64_t relock_misses = 0;
  // Summed over the GPUs: the sampler's own count of each call kind (sampler_cost in measure --json).
  std::array<sampling::CallCost, sampling::kGpuCallKinds> calls{};
  sampling::CounterScheduleStats counter;
  double cpu_pct_per_gpu() const { return 100.0 * cpu_s / (wall_s * gpus); }
};

void add_cost(CpuResult& result, const sampling::GpuSamplerCost& gpu) {
  for (std::size_t k = 0; k < sampling::kGpuCallKinds; ++k) {
    result.calls[k].calls += gpu.calls[k].calls;
    result.calls[k].cpu += gpu.calls[k].cpu;
    result.calls[k].wall += gpu.calls[k].wall;
  }
  result.counter.reads += gpu.counter.reads;
  result.counter.learning_reads += gpu.counter.learning_reads;
  result.counter.learning_bursts += gpu.counter.learning_bursts;
  result.counter.given_up_learning += gpu.counter.given_up_learning;
  result.counter.relock_checks += gpu.counter.relock_checks;
  result.counter.relock_misses += gpu.counter.relock_misses;
  result.counter.blind_reads += gpu.counter.blind_reads;
}

nlohmann::json calls_json(const CpuResult& r) {
  nlohmann::json calls = nlohmann::json::object();
  for (std::size_t k = 0; k < sampling::kGpuCallKinds; ++k) {
    const double cpu_s = std::chrono::duration<double>(r.calls[k].cpu).count();
    calls[sampling::to_string(static_cast<sampling::GpuCall>(k))] = {
        {"calls", r.calls[k].calls},
        {"cpu_s", cpu_s},
        {"cpu_pct_per_gpu", 100.0 * cpu_s / (r.wall_s * r.gpus)}};
  }
  return calls;
}

CpuResult measure_cpu(const std::string& fake_lib, const std::filesystem::path& dir, unsigned gpus,
                      double seconds, const sampling::SamplerConfig& config, bool free_calls) {
  ::setenv("WATTWISE_FAKE_NVML_CONFIG", write_fake_config(dir, gpus, free_calls).c_str(), 1);
  auto nvml = std::make_shared<const hw::NvmlLibrary>(fake_lib);
  hw::NvmlGpuSystem system(nvml, false);
  std::vector<hw::GpuReadings*> devices;
  for (std::size_t i = 0; i < system.count(); ++i) devices.push_back(&system.gpu(i));
  MonotonicClock clock;
  sampling::Sampler sampler(devices, clock, config);
  sampling::ThreadedDriver driver(sampler, clock);

  const double cpu_before = cpu_seconds();
  const Nanos start = clock.now();
  driver.start();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  driver.stop();
  CpuResult result;
  result.gpus = gpus;
  result.wall_s = std::chrono::duration<double>(clock.now() - start).count();
  result.cpu_s = cpu_seconds() - cpu_before;
  result.sampling_thread_cpu_s = std::chrono::duration<double>(driver.thread_cpu()).count();
  std::size_t reads = 0, bytes = 0;
  for (const sampling::CounterSchedule& schedule : sampler.counter_schedules()) {
    reads += schedule.reads();
    result.relock_misses += schedule.relock_misses();
  }
  for (const sampling::GpuSamplerCost& gpu : sampler.cost()) add_cost(result, gpu);
  for (const sampling::GpuTrace& trace : sampler.take_traces()) bytes += trace_bytes(trace);
  result.counter_reads_per_gpu_s = static_cast<double>(reads) / (result.wall_s * gpus);
  result.trace_bytes_per_gpu_h = static_cast<double>(bytes) / (result.wall_s * gpus) * 3600.0;
  return result;
}

struct MemoryResult {
  std::string load;
  std::string config;
  double hours = 0;
  std::size_t trace_bytes = 0;
  std::size_t held_bytes = 0;  // with the vectors' slack
  std::size_t counter = 0, instant = 0, average = 0, samples = 0, telemetry = 0;
  double max_rss_mib = 0;
};

// One GPU on a virtual clock for `hours`, under one of two loads:
//   steps  a training-like load (0.35 s at 430-470 W, 0.15 s at 180 W, its level varying from step to step):
//          steady within each part, as a simulated job's;
//   noisy  the same with every 20 ms interval +-3% off (a hash of its index), as real samples wobble:
//          nothing is steady enough to merge (kSteadyTolerance 1%), the worst case for compaction.
double load_w(const std::string& load, Nanos t) {
  const std::int64_t step = t / 500ms;
  const bool busy = t % 500ms < 350ms;
  const double level = busy ? 430.0 + static_cast<double>((step * 7919) % 41) : 180.0;
  if (load != "noisy") return level;
  const auto bin = static_cast<std::uint64_t>(t / 20ms);
  const double wobble = static_cast<double>((bin * 2654435761u) % 601) / 10000.0 - 0.03;  // -3% .. +3%
  return level * (1.0 + wobble);
}

// `edge_every`: the job marks a phase edge this often (an epoch), as `measure` tells the sampler
// (Sampler::set_window_edges); zero: no edges known (a library caller), only steady runs merge.
MemoryResult measure_memory(double hours, const std::string& load, const std::string& config_name,
                            const sampling::SamplerConfig& config, Nanos edge_every = Nanos{0}) {
  VirtualClock clock(0ns);
  wattwise::testing::FakeGpu gpu(
      clock, [&](Nanos t) { return load_w(load, t); }, {}, nullptr, -5s);
  sampling::Sampler sampler({&gpu}, clock, config);
  if (edge_every > Nanos{0}) {
    sampler.set_window_edges([edge_every](Nanos from, Nanos to) {
      std::vector<Nanos> edges;
      for (Nanos t = std::max(Nanos{0}, Nanos{from / edge_every * edge_every}); t <= to; t += edge_every)
        if (t >= from) edges.push_back(t);
      return edges;
    });
  }
  const Nanos end = std::chrono::duration_cast<Nanos>(std::chrono::duration<double, std::ratio<3600>>(hours));
  sampling::VirtualDriver(sampler, clock).run_until(end);
  const sampling::GpuTrace trace = std::move(sampler.take_traces().front());
  MemoryResult result;
  result.load = load;
  result.config = config_name;
  result.hours = hours;
  result.trace_bytes = trace_bytes(trace);
  result.held_bytes = trace_bytes(trace, true);
  result.counter = trace.energy.size();
  result.instant = trace.power_instant.size();
  result.average = trace.power_average.size();
  result.samples = trace.power_samples.size();
  result.telemetry = trace.telemetry.size();
  result.max_rss_mib = max_rss_mib();
  return result;
}

// What the sampler kept before this change: every instantaneous power and telemetry reading, every sample.
sampling::SamplerConfig keep_everything() {
  sampling::SamplerConfig config;
  config.drop_repeated_instant_and_telemetry = false;
  config.compact_samples_after.reset();
  return config;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CPU and memory of the sampler against fake GPUs with real call costs"};
  double seconds = 25;
  std::vector<unsigned> gpu_counts = {1, 2, 8};
  double sim_hours = 24;
  bool free_calls = false;
  std::string fake_lib = WATTWISE_BENCH_FAKE_NVML;
  std::string json_path;
  app.add_option("--seconds", seconds, "real seconds per GPU count")->check(CLI::PositiveNumber);
  app.add_option("--gpus", gpu_counts, "GPU counts to run, e.g. 1,2,8")->delimiter(',');
  app.add_option("--sim-hours", sim_hours, "simulated hours for the memory figure (0: skip)");
  app.add_flag("--free-calls", free_calls, "calls cost nothing (the sampler's and the fake's own CPU)");
  app.add_option("--fake-nvml", fake_lib, "the fake libnvidia-ml.so.1");
  app.add_option("--json", json_path, "also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  try {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("wattwise-bench-{}", ::getpid());
    std::filesystem::create_directories(dir);
    const sampling::SamplerConfig config;
    nlohmann::json out = {{"machine", "see docs/evidence/sampler-cpu.md"}, {"cpu", nlohmann::json::array()}};
    fmt::print("{:>5} {:>8} {:>8} {:>16} {:>19} {:>20} {:>18} {:>13}\n", "gpus", "wall_s", "cpu_s",
               "cpu_pct_per_gpu", "thread_pct_per_gpu", "counter_reads/s/gpu", "trace_MB/gpu-hour",
               "relock_misses");
    for (unsigned n : gpu_counts) {
      const CpuResult r = measure_cpu(fake_lib, dir, n, seconds, config, free_calls);
      fmt::print("{:>5} {:>8.2f} {:>8.3f} {:>15.2f}% {:>18.2f}% {:>20.2f} {:>18.2f} {:>13}\n", r.gpus,
                 r.wall_s, r.cpu_s, r.cpu_pct_per_gpu(),
                 100.0 * r.sampling_thread_cpu_s / (r.wall_s * r.gpus), r.counter_reads_per_gpu_s,
                 r.trace_bytes_per_gpu_h / 1e6, r.relock_misses);
      for (std::size_t k = 0; k < sampling::kGpuCallKinds; ++k) {
        if (r.calls[k].calls == 0) continue;
        const double cpu_s = std::chrono::duration<double>(r.calls[k].cpu).count();
        fmt::print("        {:<16} {:>8} calls {:>8.3f} s CPU {:>7.3f}% of a core per GPU\n",
                   sampling::to_string(static_cast<sampling::GpuCall>(k)), r.calls[k].calls, cpu_s,
                   100.0 * cpu_s / (r.wall_s * r.gpus));
      }
      fmt::print("        counter reads {}: {} learning in {} bursts, {} lock checks, {} blind\n",
                 r.counter.reads, r.counter.learning_reads, r.counter.learning_bursts,
                 r.counter.relock_checks, r.counter.blind_reads);
      out["cpu"].push_back({{"gpus", r.gpus},
                            {"wall_s", r.wall_s},
                            {"cpu_s", r.cpu_s},
                            {"cpu_pct_per_gpu", r.cpu_pct_per_gpu()},
                            {"counter_reads_per_gpu_s", r.counter_reads_per_gpu_s},
                            {"trace_bytes_per_gpu_hour", r.trace_bytes_per_gpu_h},
                            {"relock_misses", r.relock_misses},
                            {"sampling_thread_cpu_s", r.sampling_thread_cpu_s},
                            {"calls", calls_json(r)},
                            {"counter_reads", r.counter.reads},
                            {"learning_reads", r.counter.learning_reads},
                            {"learning_bursts", r.counter.learning_bursts},
                            {"relock_checks", r.counter.relock_checks},
                            {"blind_reads", r.counter.blind_reads}});
    }
    std::filesystem::remove_all(dir);
    if (sim_hours > 0) {
      out["memory"] = nlohmann::json::array();
      for (const std::string load : {"steps", "noisy"}) {
        for (const std::string variant : {"before", "after", "after, an edge a minute"}) {
          const bool before = variant == "before";
          const Nanos edges = variant == "before" || variant == "after" ? Nanos{0} : Nanos{60s};
          const MemoryResult m = measure_memory(sim_hours, load, variant, before ? keep_everything() : config,
                                                edges);
          fmt::print(
              "\nsimulated {:g} h, one GPU, {} load, {}: kept trace {:.1f} MB ({:.2f} MB per GPU-hour), held "
              "with vector slack {:.1f} MB; readings kept: counter {}, instant {}, average {}, samples {}, "
              "telemetry {}; process max RSS so far {:.0f} MiB\n",
              m.hours, m.load, m.config, m.trace_bytes / 1e6, m.trace_bytes / 1e6 / m.hours,
              m.held_bytes / 1e6, m.counter, m.instant, m.average, m.samples, m.telemetry, m.max_rss_mib);
          out["memory"].push_back({{"load", m.load},
                                   {"config", m.config},
                                   {"simulated_hours", m.hours},
                                   {"trace_bytes", m.trace_bytes},
                                   {"held_bytes", m.held_bytes},
                                   {"counter_readings", m.counter},
                                   {"instant_readings", m.instant},
                                   {"average_readings", m.average},
                                   {"sample_readings", m.samples},
                                   {"telemetry_readings", m.telemetry},
                                   {"max_rss_mib", m.max_rss_mib}});
        }
      }
    }
    if (!json_path.empty()) std::ofstream(json_path) << out.dump(2) << '\n';
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_sampler_cpu: {}\n", e.what());
    return 3;
  }
  return 0;
}
