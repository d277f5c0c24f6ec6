#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "measure/measurement.hpp"
#include "measure/node_energy.hpp"
#include "measure/phase_folding.hpp"
#include "sampling/sampler_config.hpp"

namespace wattwise::sampling {
class Sampler;
}
namespace wattwise::workload {
class MarkerReceiver;
}

namespace wattwise::measure {

// What a watcher sees of a job while it runs (the live side of `tune`): the sampler's readings so far
// (Sampler::snapshot_since) and the markers heard so far (MarkerReceiver::markers_since), both safe to read
// from the watcher's thread.
struct LiveJob {
  const sampling::Sampler& sampler;
  const workload::MarkerReceiver& receiver;
  Clock& clock;
  Nanos job_start{0};
  std::vector<std::size_t> job_gpus;  // positions in the sampler (constructor order) of the job's GPUs
};

// Runs on its own thread from the job's start until it returns; `job_ended` turns true when the job has
// ended (and the measurement waits for the watcher to return before it goes on). What it throws ends the
// watcher alone and is said on stderr (job_watchers.hpp's run_watcher): the job and its measurement go on.
using JobWatcher = std::function<void(const LiveJob& job, const std::atomic<bool>& job_ended)>;

struct MeasureOptions {
  std::vector<std::size_t> gpu_positions;  // GPUs to sample (positions in the GpuSystem); empty: all
  std::optional<std::size_t>
      job_gpu_count;          // the job uses the first N of them, the rest are idle; empty: all
  std::vector<bool> via_mig;  // per gpu_positions entry: the job saw it through a MIG device; empty: none
  std::string job_gpu_source = "all";  // how the job's GPUs were chosen (JobGpuSelection::source)
  sampling::SamplerConfig sampler;
  std::optional<Nanos> timeout;
  std::map<std::string, std::string> extra_environment;
  bool job_stdout_to_stderr = false;  // `--json -`: stdout carries the JSON alone
  // Pass the job's stdout and stderr on through pipes and keep the end of each (Measurement::job_stdout,
  // job_stderr): a sweep stores them with the run, so a failed run says more than its exit status.
  bool keep_output_tail = false;
  NodeOptions node;                   // node power beside the GPUs (real runs only)
  // Told at once when a sampled GPU is lost or its readings keep failing (from a sampling thread); the
  // measurement goes on without it and says so in the result.
  std::function<void(const hw::GpuIdentity& gpu, Nanos since_job_start, const sampling::SourceFailure&)>
      on_gpu_failed;
  JobWatcher while_job_runs;  // empty: nobody watches
  PhaseFoldingConfig phase_folding;  // when a long job's phases are folded while it runs
};

// Runs `argv` as a job on the real time line: starts the sampler and the marker channel, starts the job in
// its own process group (forwarding SIGINT/SIGTERM/SIGHUP to it), waits, samples a little past its end so
// the energy counter covers it, and attributes energy to GPUs and phases. A job that fails or is killed
// still yields a complete Measurement: what was measured is never thrown away.
Measurement measure_command(hw::GpuSystem& system, const std::vector<std::string>& argv,
                            const MeasureOptions& options);

// Shared by the real and the simulated path: attributes energy from the traces with sampling's accountant,
// checked (measure/energy_checks.hpp); each failed check, and with `judge_starvation` each GPU whose sampler
// was starved of CPU, is said on stderr.
void account(Measurement& m, bool judge_starvation = false);

// The node figures over the job from the node sampler's traces; warns of sources left without a figure.
void account_node(Measurement& m, std::vector<sampling::NodeTrace> traces, std::vector<std::string> warnings,
                  const NodeOptions& options);

// The GPUs to sample, checked; and the skeleton of a Measurement for them.
Measurement prepare(hw::GpuSystem& system, const MeasureOptions& options, std::vector<hw::GpuReadings*>& gpus);

}  // namespace wattwise::measure
