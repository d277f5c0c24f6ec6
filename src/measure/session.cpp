#include "measure/session.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/text.hpp"
#include "core/thread_name.hpp"
#include "core/version.hpp"
#include "measure/attribution.hpp"
#include "measure/energy_checks.hpp"
#include "measure/gpu_usage_monitor.hpp"
#include "measure/job_watchers.hpp"
#include "measure/phase_folding.hpp"
#include "sampling/energy_accounting.hpp"
#include "sampling/node_sampler.hpp"
#include "sampling/sampler.hpp"
#include "sampling/threaded_driver.hpp"
#include "workload/marker_receiver.hpp"
#include "workload/phases.hpp"
#include "workload/process.hpp"
#include "workload/stop_signals.hpp"

namespace wattwise::measure {

namespace {

// The counter's value changes every ~100 ms and can be that old when read: keep sampling this long after
// the job ended so the last counter reads describe the job's last moments.
constexpr Nanos kTailAfterJob = std::chrono::milliseconds(250);

double cpu_seconds_used() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Every GPU of the node is asked who runs on it, the measured ones and the others alike.
GpuUsageTracker usage_tracker(hw::GpuSystem& system, const Measurement& m) {
  std::vector<hw::GpuReadings*> all;
  std::vector<std::size_t> measured;
  std::size_t job_gpus = 0;
  for (std::size_t i = 0; i < system.count(); ++i) all.push_back(&system.gpu(i));
  for (const auto& e : m.gpu_energy) {
    for (std::size_t i = 0; i < system.count(); ++i)
      if (system.gpu(i).identity().uuid == e.gpu.uuid) measured.push_back(i);
    job_gpus += e.used_by_job ? 1 : 0;
  }
  return GpuUsageTracker(all, usage_skeleton(system, measured, job_gpus));
}

// The watcher's thread, ended and joined however the job's wait ends (an exception included): it reads the
// sampler and the receiver, which must outlive it. What the watcher throws ends it alone (run_watcher).
class WatcherThread {
 public:
  WatcherThread(const JobWatcher& watcher, LiveJob job) : job_(std::move(job)) {
    if (watcher)
      thread_ = named_thread("ww-job-watcher",
                             [this, &watcher] { run_watcher(watcher, "a job watcher", job_, ended_); });
  }
  ~WatcherThread() { finish(); }
  WatcherThread(const WatcherThread&) = delete;
  WatcherThread& operator=(const WatcherThread&) = delete;
  void finish() {
    ended_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  LiveJob job_;
  std::atomic<bool> ended_{false};
  std::thread thread_;
};

// Folds a long job's phases every kFoldPeriod while it runs (phase_folding.hpp): takes the markers heard
// since over from the receiver, folds, lets the sampler coarsen what no open phase needs, and lets the
// receiver forget what it handed over a period ago (live readers take theirs within seconds). Whatever goes
// wrong stops the folding alone (the job, its markers and its trace go on as without it), said on stderr.
class FoldingThread {
 public:
  FoldingThread(PhaseFolder& folder, workload::MarkerReceiver& receiver, sampling::Sampler& sampler,
                Clock& clock)
      : folder_(folder), receiver_(receiver), sampler_(sampler), clock_(clock) {
    thread_ = named_thread("ww-phase-folding", [this] { run(); });
  }
  ~FoldingThread() { finish(); }
  FoldingThread(const FoldingThread&) = delete;
  FoldingThread& operator=(const FoldingThread&) = delete;
  // Stops it; returns how many of the receiver's markers it handed to the folder.
  std::size_t finish() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    return handed_;
  }

 private:
  void run() {
    try {
      std::size_t handed_before = 0;
      for (;;) {
        {
          std::unique_lock lock(mutex_);
          if (wake_.wait_for(lock, kFoldPeriod, [this] { return stopping_; })) return;
        }
        std::vector<workload::Marker> fresh = receiver_.markers_since(handed_);
        handed_ += fresh.size();
        folder_.add(std::move(fresh));
        const auto coarsen = folder_.fold(clock_.now(), [this](Nanos since) { return sampler_.snapshot_since(since); });
        receiver_.forget(handed_before, coarsen.value_or(Nanos::min()));
        handed_before = handed_;
        if (coarsen) sampler_.coarsen_before(*coarsen);
      }
    } catch (const std::exception& e) {
      std::cerr << "wattwise: the folding of the job's phases stopped (" << e.what()
                << "); its markers are kept whole from here\n";
    }
  }

  PhaseFolder& folder_;
  workload::MarkerReceiver& receiver_;
  sampling::Sampler& sampler_;
  Clock& clock_;
  std::size_t handed_ = 0;  // markers taken over; written by the thread, then by finish() after the join
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace

Measurement prepare(hw::GpuSystem& system, const MeasureOptions& options, std::vector<hw::GpuReadings*>& gpus) {
  Measurement m;
  m.tool_version = kVersion;
  m.backend = system.backend();
  m.driver_version = system.driver_version();
  m.job_gpu_source = options.job_gpu_source;
  std::vector<std::size_t> positions = options.gpu_positions;
  if (positions.empty())
    for (std::size_t i = 0; i < system.count(); ++i) positions.push_back(i);
  const std::size_t job_gpus = options.job_gpu_count.value_or(positions.size());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    auto& gpu = system.gpu(positions[k]);
    gpus.push_back(&gpu);
    m.gpus.push_back(gpu.identity());
    GpuEnergy e;
    e.gpu = gpu.identity();
    e.used_by_job = k < job_gpus;
    e.via_mig = k < options.via_mig.size() && options.via_mig[k];
    try {
      if (const auto limits = gpu.power_limits(); limits && limits->max_w > 0)
        e.power_limit_max_w = std::max(limits->max_w, limits->enforced_w);
    } catch (const std::exception&) {
      // A GPU that cannot say its limits is checked against the peak it is seen at instead.
    }
    m.gpu_energy.push_back(e);
  }
  return m;
}

void account(Measurement& m, bool judge_starvation) {
  // Said once per run, here and in the JSON (`checks`, the GPUs' `starved`).
  for (const std::string& line : account_checked(m, judge_starvation)) std::cerr << line << '\n';
}

void account_node(Measurement& m, std::vector<sampling::NodeTrace> traces, std::vector<std::string> warnings,
                  const NodeOptions& options) {
  std::vector<std::optional<double>> gpu_energy_j;
  for (const auto& g : m.gpu_energy) gpu_energy_j.push_back(g.energy_j);
  m.node = node_energy(traces, m.job_start, m.job_end, gpu_energy_j);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::string line = failed_source_warning(traces[i], m.node->sources.at(i));
    if (line.empty()) continue;
    warnings.push_back(line);
    warn(options, line);
  }
  m.node->warnings = std::move(warnings);
  for (auto& phase : m.phase_summaries) {
    const NodeParts sources = node_source_parts(traces, phase_spans(m.phases, phase.name));
    phase.node.cpu_package_j = sources.cpu_package_j;
    phase.node.dram_j = sources.dram_j;
    phase.node.meter_j = sources.meter_j;
  }
  m.node_traces = std::move(traces);
}

Measurement measure_command(hw::GpuSystem& system, const std::vector<std::string>& argv,
                            const MeasureOptions& options) {
  std::vector<hw::GpuReadings*> gpus;
  Measurement m = prepare(system, options, gpus);
  m.command = argv;  // the job runs with argv as given; the record of it must be valid UTF-8 for JSON
  for (auto& arg : m.command) make_valid_utf8(arg);
  const double cpu_before = cpu_seconds_used();

  MonotonicClock clock;
  sampling::Sampler sampler(gpus, clock, options.sampler);
  workload::MarkerReceiver receiver;
  workload::LaunchSpec spec;
  spec.argv = argv;
  spec.extra_environment = options.extra_environment;
  spec.stdout_to_stderr = options.job_stdout_to_stderr;
  std::optional<workload::OutputTee> stdout_tee, stderr_tee;
  if (options.keep_output_tail) {
    stdout_tee.emplace(options.job_stdout_to_stderr ? STDERR_FILENO : STDOUT_FILENO);
    stderr_tee.emplace(STDERR_FILENO);
    spec.stdout_fd = stdout_tee->write_fd();
    spec.stderr_fd = stderr_tee->write_fd();
  }
  spec.extra_environment[workload::MarkerReceiver::kEnvironmentVariable] = receiver.socket_path().string();
  spec.extra_environment[workload::MarkerReceiver::kChangedUserEnvironmentVariable] =
      receiver.changed_user_socket_path().string();

  // job_start is set just after the cadences start; a failure before it reads as 0 s.
  std::atomic<std::int64_t> job_start_ns{0};
  if (options.on_gpu_failed) {
    sampler.on_failure([&](std::size_t position, const sampling::SourceFailure& failure) {
      const std::int64_t start_ns = job_start_ns.load();
      const Nanos since = start_ns == 0 ? Nanos{0} : failure.at - Nanos{start_ns};
      options.on_gpu_failed(m.gpus.at(position), std::max(since, Nanos{0}), failure);
    });
  }
  // Node sources on their own thread, first, so that their first reading precedes the job's start.
  std::vector<std::string> node_warnings;
  sampling::NodeSampler node_sampler(open_node_sources(options.node, node_warnings), clock,
                                     options.node.period);
  node_sampler.start();
  // Old samples merge everywhere but near the job's marker instants, where its phases are cut.
  sampler.set_window_edges(
      [&receiver](Nanos from, Nanos to) { return receiver.marker_times_between(from, to); });
  // A long job's phases are folded while it runs; the trace no open phase needs is coarsened.
  PhaseFolder folder(job_gpu_positions_of(m.gpu_energy), m.gpus.size(), options.phase_folding);
  sampler.set_coarse_edges([&folder](Nanos from, Nanos to) { return folder.open_begins(from, to); });
  sampling::ThreadedDriver driver(sampler, clock);
  driver.start();
  m.job_start = clock.now();
  job_start_ns = m.job_start.count();
  std::size_t handed_markers = 0;  // of the receiver's, to the folder
  {
    // `measure` (the CLI) and run_sweep install the stop signals first, so a signal is recorded (never
    // fatal) from then to the end, tail and accounting included. A library caller that did not gets them
    // for the job's lifetime here: signals must reach the job, not kill wattwise and orphan it.
    std::optional<workload::StopSignals> own_signals;
    if (!workload::StopSignals::installed()) own_signals.emplace();
    // Start fails (command not found) before any time is spent: the driver's destructor stops sampling.
    // From its fork on, the job's group gets every stop signal (Process::start registers it).
    auto process = workload::Process::start(spec);
    if (stdout_tee) stdout_tee->close_write_end();  // the job holds its own: its end is the pipe's end
    if (stderr_tee) stderr_tee->close_write_end();
    GpuUsageMonitor usage(usage_tracker(system, m), process.pid());
    LiveJob live{sampler, receiver, clock, m.job_start, {}};
    for (std::size_t k = 0; k < m.gpu_energy.size(); ++k)
      if (m.gpu_energy[k].used_by_job) live.job_gpus.push_back(k);
    WatcherThread watcher(options.while_job_runs, std::move(live));
    FoldingThread folding(folder, receiver, sampler, clock);
    workload::WaitOptions wait;
    wait.timeout = options.timeout;
    process.wait(wait);
    watcher.finish();        // the watcher stops with the job, before the tail is sampled
    handed_markers = folding.finish();
    sampler.read_densely();  // the tail's postings bracketed to a few ms: the job's end is placed on them
    m.gpu_usage = usage.stop();
    // When the end was seen, not after the clean-up of the job's leftovers (Process ends those).
    m.job_end = process.ended_at().value_or(clock.now());
    m.outcome.exit_code = process.exit_code();
    m.outcome.signal = process.signal();
    m.outcome.timed_out = process.timed_out();
    if (stdout_tee) m.job_stdout = stdout_tee->finish();
    if (stderr_tee) m.job_stderr = stderr_tee->finish();
  }
  clock.sleep_until(m.job_end + kTailAfterJob);
  driver.stop();
  m.sampler_cost = SamplerCostReport{cpu_before, to_seconds(clock.now() - m.job_start),
                                     to_seconds(driver.thread_cpu()), 0, sampler.cost()};
  node_sampler.stop();
  receiver.stop();

  m.traces = sampler.take_traces();
  // What the folding has not taken: the markers heard since it stopped, then all of them it holds.
  folder.add(receiver.markers_since(handed_markers));
  m.markers = folder.take_pending();
  m.folded = folder.take_folded();
  m.dropped_markers = static_cast<std::size_t>(folder.dropped_by_job());
  m.malformed_markers = static_cast<std::size_t>(receiver.malformed_count());
  m.refused_markers = static_cast<std::size_t>(receiver.refused_count());
  m.refused_reason = receiver.refusal_reason();
  if (m.refused_markers > 0)  // said once per run, here and in the summary and JSON
    std::cerr << fmt::format("wattwise: refused {} marker(s): {}\n", m.refused_markers, m.refused_reason);
  if (m.dropped_markers > 0)  // likewise: a sweep's run has no summary of its own
    std::cerr << fmt::format(
        "wattwise: the job lost {} marker(s): its clients found wattwise's queue full and dropped them; "
        "phase counts and energies may be short\n",
        m.dropped_markers);
  auto phases = workload::build_phases(m.markers);
  m.phases = std::move(phases.phases);
  m.unmatched_markers = static_cast<std::size_t>(phases.unmatched_begins + phases.unmatched_ends) +
                        (m.folded ? m.folded->unmatched_ends : 0);
  const Nanos accounting_cpu_before = sampling::thread_cpu_time();
  account(m, /*judge_starvation=*/true);
  m.sampler_cost->accounting_cpu_s = to_seconds(sampling::thread_cpu_time() - accounting_cpu_before);
  if (!node_sampler.empty()) {
    account_node(m, node_sampler.take_traces(), node_warnings, options.node);
    m.node->period = node_sampler.period();
  }
  m.wattwise_cpu_s = cpu_seconds_used() - cpu_before;
  return m;
}

}  // namespace wattwise::measure
