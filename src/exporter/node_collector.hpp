#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "exporter/energy_total.hpp"
#include "exporter/job_energy.hpp"
#include "exporter/node_metrics.hpp"
#include "hw/gpu.hpp"
#include "sampling/sampler.hpp"
#include "sampling/threaded_driver.hpp"

namespace wattwise::exporter {

struct CollectorOptions {
  sampling::SamplerConfig sampler;  // the measuring commands' sampler; fast_period is --interval
  std::string hostname;
  // How often the readings are taken from the sampler (on its thread) into the totals and gauges: a
  // scrape sees readings at most this old, extended to its instant by the last power.
  Nanos harvest_period = std::chrono::milliseconds(250);
  // How often each GPU's compute processes (and its power limit) are read: a job's energy is resolved to
  // this period.
  Nanos job_poll_period = std::chrono::seconds(1);
  std::filesystem::path proc = "/proc";  // where job_id_of_process looks
};

// The node collector behind `wattwise exporter`: the one-thread Sampler of every measuring command, run for as
// long as the exporter lives. Every harvest_period, on the sampling thread, its readings are taken out
// (Sampler::take_traces, so memory stays bounded) into each GPU's EnergyTotal and latest gauges; every
// job_poll_period the GPUs' compute processes are read there too, so every call to a GPU is made from
// that one thread. A scrape (any HTTP thread) only reads that state, under one lock.
class NodeCollector {
 public:
  // `gpus` are not owned and must outlive the collector.
  NodeCollector(std::vector<hw::GpuReadings*> gpus, Clock& clock, CollectorOptions options);
  ~NodeCollector();
  NodeCollector(const NodeCollector&) = delete;
  NodeCollector& operator=(const NodeCollector&) = delete;

  void start();
  // Stops sampling (joins its thread); idempotent.
  void stop();

  // What a scrape shows now.
  NodeSnapshot snapshot();
  // The /metrics body now.
  std::string metrics_text();
  // True while the sampling thread harvests on time and some GPU is still read.
  bool healthy() const;

 private:
  struct GpuState {
    EnergyTotal energy;
    std::optional<double> power_limit_w;
    hw::Telemetry telemetry;
    double polled_j = 0;  // the energy total at the previous job poll
    double polled_bar_j = 0;  // its committed error bar then
  };

  void harvest(Nanos now);
  void poll_gpus(Nanos now);  // compute processes (jobs) and power limits; on the sampling thread

  std::vector<hw::GpuReadings*> gpus_;
  Clock& clock_;
  CollectorOptions options_;
  std::unique_ptr<sampling::Sampler> sampler_;
  std::unique_ptr<sampling::ThreadedDriver> driver_;
  Nanos next_poll_{0};  // sampling thread only

  mutable std::mutex mutex_;  // guards everything below
  std::vector<GpuState> state_;
  JobEnergy jobs_;
  std::atomic<std::int64_t> last_harvest_ns_{0};
  std::atomic<bool> running_{false};
};

}  // namespace wattwise::exporter
