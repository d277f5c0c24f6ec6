#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sim/profiles.hpp"
#include "sim/sim_gpu.hpp"
#include "workload/marker.hpp"

namespace wattwise::sim {

struct JobOptions {
  unsigned batch = 128;  // samples per GPU per iteration (data parallel: all GPUs together do batch * gpus)
  std::int64_t samples_per_epoch = 100000;
  int epochs = 1;
  Nanos start_gap = std::chrono::milliseconds(500);  // idle before training (start-up, data loading)
  Nanos epoch_gap = std::chrono::milliseconds(200);  // idle between epochs (validation, checkpoint)
  Nanos end_gap = std::chrono::milliseconds(500);    // idle after training (saving, tear-down)
  // Iteration markers for only the first K iterations of each epoch (nullopt: all). The unmarked rest of
  // an epoch is simulated in one step, so a long epoch costs next to nothing.
  std::optional<std::int64_t> iteration_markers_per_epoch;
  double noise_fraction = 0.01;                // run-to-run spread of throughput (and half of it in power)
  std::optional<double> power_noise_fraction;  // the spread in power when not half of noise_fraction
  std::uint64_t seed = 1;
  int pid = 4242;
};

// A data-parallel training job in virtual time: `epochs` epochs of `samples_per_epoch` samples in
// iterations, on one or more SimGpus. It loads the GPUs while it trains and emits the markers a real job
// would (training, epoch, iteration begin/end; iterations carry samples=...). Its speed is the GPUs' speed
// (the slowest GPU paces the job), so a power limit set during the run slows it from that instant.
//
// Event loop: while (auto t = job.next_event()) { clock.sleep_until(*t); handle(job.advance_to(*t)); }
// with any sampling in between. Calling advance_to at a later time is allowed, but the GPUs' load then
// changes at the exact event times only if nobody read them past those times in between.
class SimJob {
 public:
  // Starts at `start` (its idle start gap begins then). The GPUs must outlive the job.
  SimJob(std::vector<SimGpu*> gpus, WorkloadProfile workload, JobOptions options, Nanos start);

  std::optional<Nanos> next_event() const;  // nullopt once finished
  std::vector<workload::Marker> advance_to(Nanos t);
  bool finished() const { return stage_ == Stage::kFinished; }
  int exit_code() const { return exit_code_; }  // -1 while running
  // Like SIGTERM: the load stops at `at`, the job exits with 143 and emits no further markers.
  void terminate(Nanos at);

  std::int64_t iterations_per_epoch() const { return iterations_per_epoch_; }
  const WorkloadProfile& workload() const { return workload_; }  // with this run's noise applied

 private:
  enum class Stage { kStartGap, kTraining, kEpochGap, kEndGap, kFinished };

  std::int64_t marked_iterations() const;
  std::int64_t samples_in_iteration(std::int64_t iteration) const;
  double work_s_after(std::int64_t iterations) const;  // per GPU, from the epoch's start
  void handle_event(Nanos t, std::vector<workload::Marker>& out);
  void begin_epoch(Nanos t, std::vector<workload::Marker>& out);
  void end_epoch(Nanos t, std::vector<workload::Marker>& out);
  void emit(std::vector<workload::Marker>& out, Nanos t, workload::MarkerKind kind, const char* name,
            std::map<std::string, double> counters) const;

  std::vector<SimGpu*> gpus_;
  WorkloadProfile workload_;
  std::vector<WorkloadProfile> gpu_loads_;  // per GPU, each with its own power noise
  JobOptions options_;
  std::int64_t iterations_per_epoch_;

  Stage stage_ = Stage::kStartGap;
  Nanos deadline_;  // end of the current idle gap
  int epoch_ = 0;
  std::int64_t iteration_ = 0;     // iterations completed in this epoch (marked part)
  std::vector<double> work_base_;  // each GPU's work seconds at the epoch's start
  int exit_code_ = -1;
};

}  // namespace wattwise::sim
