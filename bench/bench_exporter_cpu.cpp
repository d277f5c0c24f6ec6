// What `wattwise exporter` costs: CPU seconds per GPU-second of the node collector (the shared sampler, the
// harvest into the energy totals, the job poll) and its HTTP server under one scrape a second, against 1, 2
// and 8 fake GPUs (tests/fake_nvml) whose calls burn the CPU that the H100's do (the setup of
// bench_sampler_cpu, bench/fake_nvml_bench_config.hpp). One command (from a Release build):
//
//   build/bench/bench_exporter_cpu --seconds 20 --gpus 1,2,8
//
// CPU is getrusage(RUSAGE_SELF) over the measurement minus the scraping client's own thread
// (RUSAGE_THREAD), so it is the exporter's: sampler, fake driver, harvest, job poll, server threads.
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <httplib.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "exporter/metrics_server.hpp"
#include "exporter/node_collector.hpp"
#include "fake_nvml_bench_config.hpp"
#include "hw/nvml_library.hpp"
#include "hw/nvml_system.hpp"

namespace {

using namespace wattwise;
using namespace std::chrono_literals;

double seconds_of(const rusage& usage) {
  const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec * 1e-6; };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

double cpu_seconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  return seconds_of(usage);
}

struct Result {
  unsigned gpus = 0;
  double wall_s = 0;
  double cpu_s = 0;
  int scrapes = 0;
  std::size_t last_body_bytes = 0;
  double cpu_pct_per_gpu() const { return 100.0 * cpu_s / (wall_s * gpus); }
};

Result measure(const std::string& fake_lib, const std::filesystem::path& dir, unsigned gpus, double seconds,
               int port) {
  ::setenv("WATTWISE_FAKE_NVML_CONFIG", bench::write_fake_config(dir, gpus, false).c_str(), 1);
  auto nvml = std::make_shared<const hw::NvmlLibrary>(fake_lib);
  hw::NvmlGpuSystem system(nvml, false);
  std::vector<hw::GpuReadings*> devices;
  for (std::size_t i = 0; i < system.count(); ++i) devices.push_back(&system.gpu(i));
  MonotonicClock clock;
  exporter::CollectorOptions options;  // the command's defaults: --interval 100
  options.sampler.fast_period = 100ms;
  options.hostname = "bench";
  exporter::NodeCollector collector(devices, clock, options);
  exporter::MetricsServer server(
      {"127.0.0.1", port}, {[&collector] { return collector.metrics_text(); }, [&collector] { return collector.healthy(); }});

  Result result;
  result.gpus = gpus;
  std::atomic<bool> stop = false;
  double client_cpu_s = 0;
  const double cpu_before = cpu_seconds(RUSAGE_SELF);
  const Nanos start = clock.now();
  collector.start();
  server.start();
  // Prometheus' scrape_interval 1s: one GET /metrics a second, on absolute deadlines.
  std::thread client([&] {
    const double own_before = cpu_seconds(RUSAGE_THREAD);
    httplib::Client http("127.0.0.1", port);
    Nanos next = clock.now() + 1s;
    while (!stop) {
      clock.sleep_until(next);
      next += 1s;
      if (stop) break;
      if (const auto response = http.Get("/metrics"); response && response->status == 200) {
        ++result.scrapes;
        result.last_body_bytes = response->body.size();
      }
    }
    client_cpu_s = cpu_seconds(RUSAGE_THREAD) - own_before;
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  client.join();
  server.stop();
  collector.stop();
  result.wall_s = to_seconds(clock.now() - start);
  result.cpu_s = cpu_seconds(RUSAGE_SELF) - cpu_before - client_cpu_s;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CPU of the exporter (node collector + HTTP server) under a 1 s scrape, against fake GPUs"};
  double seconds = 20;
  std::vector<unsigned> gpu_counts = {1, 2, 8};
  std::string fake_lib = WATTWISE_BENCH_FAKE_NVML;
  int port = 19467;
  app.add_option("--seconds", seconds, "real seconds per GPU count")->check(CLI::PositiveNumber);
  app.add_option("--gpus", gpu_counts, "GPU counts to run, e.g. 1,2,8")->delimiter(',');
  app.add_option("--fake-nvml", fake_lib, "the fake libnvidia-ml.so.1");
  app.add_option("--port", port, "loopback port to serve on");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / fmt::format("wattwise-bench-exporter-{}", ::getpid());
    std::filesystem::create_directories(dir);
    fmt::print("{:>5} {:>8} {:>8} {:>16} {:>8} {:>12}\n", "gpus", "wall_s", "cpu_s", "cpu_pct_per_gpu",
               "scrapes", "body_bytes");
    for (unsigned n : gpu_counts) {
      const Result r = measure(fake_lib, dir, n, seconds, port);
      fmt::print("{:>5} {:>8.2f} {:>8.3f} {:>15.2f}% {:>8} {:>12}\n", r.gpus, r.wall_s, r.cpu_s,
                 r.cpu_pct_per_gpu(), r.scrapes, r.last_body_bytes);
    }
    std::filesystem::remove_all(dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_exporter_cpu: {}\n", e.what());
    return 3;
  }
  return 0;
}
