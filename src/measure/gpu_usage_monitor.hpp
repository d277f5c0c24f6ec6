#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "hw/gpu.hpp"
#include "measure/measurement.hpp"
#include "sampling/hung_call.hpp"
#include "workload/process_tree.hpp"

// Which GPUs the job's processes actually run on, from the driver's list of compute processes per GPU
// matched against the job's process tree. Asked about once a second, of every GPU of the node, measured or
// not: a job that strays onto a GPU it was not given is found even when that GPU is left out of the
// measurement. wattwise's own share of a poll is bench/bench_gpu_usage.cpp (docs/evidence/gpu-usage-poll.md).
namespace wattwise::measure {

// The matching, one round at a time (no thread): testable with fake GPUs and a fake /proc.
class GpuUsageTracker {
 public:
  // `gpus` and `usage` in the same order: every GPU of the node, with `expected` and `measured` set.
  GpuUsageTracker(std::vector<hw::GpuReadings*> gpus, std::vector<GpuUsage> usage);

  // Asks every GPU for its compute processes once, and refreshes the tree only when one of them lists a
  // pid not classified yet: the /proc walk reads every process's stat (~2 ms a second on a GPU node, more
  // than the driver's lists), while the pids on a GPU stay the same for a job's life. A pid found outside
  // the tree stays foreign (pid reuse within one job's life is not looked for).
  void poll(workload::JobProcessTree& tree);
  std::vector<GpuUsage> result() const;

 private:
  struct Seen {
    bool listed = false;       // the driver answered at least once
    bool foreign_pid = false;  // it listed a pid that names no process here (another pid namespace)
  };
  std::vector<hw::GpuReadings*> gpus_;
  std::vector<GpuUsage> usage_;
  std::vector<Seen> seen_;
  std::set<pid_t> foreign_;  // listed pids that were not in the job's tree when it was refreshed
};

// Polls on its own thread: at once, then every `period` while the job runs, and once more at stop(). A
// driver call that does not return within sampling::kDefaultHungCallAfter leaves the rounds done so far.
class GpuUsageMonitor {
 public:
  static constexpr std::chrono::milliseconds kDefaultPeriod{1000};

  GpuUsageMonitor(GpuUsageTracker tracker, pid_t job, std::chrono::milliseconds period = kDefaultPeriod);
  ~GpuUsageMonitor();
  GpuUsageMonitor(const GpuUsageMonitor&) = delete;
  GpuUsageMonitor& operator=(const GpuUsageMonitor&) = delete;

  // Stops the thread after one last poll and returns what was seen.
  std::vector<GpuUsage> stop();

 private:
  void run();

  GpuUsageTracker tracker_;
  workload::JobProcessTree tree_;
  std::chrono::milliseconds period_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool done_ = false;                         // the thread made its last round
  std::shared_ptr<sampling::CallSlot> slot_;  // the thread's driver call in progress (hung_call.hpp)
  std::thread thread_;
};

// Every GPU of the system, with the job's (the first `job_gpu_count` of `measured_positions`) expected.
std::vector<GpuUsage> usage_skeleton(hw::GpuSystem& system,
                                     const std::vector<std::size_t>& measured_positions,
                                     std::size_t job_gpu_count);

}  // namespace wattwise::measure
