#include "measure/gpu_usage_monitor.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/thread_name.hpp"
#include "sampling/hung_call.hpp"

namespace wattwise::measure {

GpuUsageTracker::GpuUsageTracker(std::vector<hw::GpuReadings*> gpus, std::vector<GpuUsage> usage)
    : gpus_(std::move(gpus)), usage_(std::move(usage)), seen_(gpus_.size()) {}

void GpuUsageTracker::poll(workload::JobProcessTree& tree) {
  std::vector<std::optional<std::vector<hw::GpuProcess>>> listed(gpus_.size());
  bool unclassified = false;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    try {
      const MonotonicClock clock;
      const sampling::WatchedCall watched(i, "compute_processes", clock);
      listed[i] = gpus_[i]->compute_processes();
    } catch (const Error&) {
      // A lost or failing GPU is the sampler's to report (it names the GPU and the call); here it only
      // means this round says nothing about that GPU.
      continue;
    }
    if (!listed[i]) continue;
    for (const auto& p : *listed[i]) unclassified |= !tree.contains(p.pid) && !foreign_.contains(p.pid);
  }
  if (unclassified) tree.refresh();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!listed[i]) continue;
    seen_[i].listed = true;
    for (const auto& p : *listed[i]) {
      auto& pids = usage_[i].pids;
      if (tree.contains(p.pid)) {
        if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) pids.push_back(p.pid);
      } else {
        foreign_.insert(p.pid);
        if (!tree.visible_here(p.pid)) seen_[i].foreign_pid = true;
      }
    }
  }
}

std::vector<GpuUsage> GpuUsageTracker::result() const {
  std::vector<GpuUsage> out = usage_;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (!out[i].pids.empty())
      out[i].job_seen = true;
    else if (seen_[i].listed && !seen_[i].foreign_pid)
      out[i].job_seen = false;
    // Else unknown: the driver could not list, or listed pids of another pid namespace that may be ours.
    std::sort(out[i].pids.begin(), out[i].pids.end());
  }
  return out;
}

GpuUsageMonitor::GpuUsageMonitor(GpuUsageTracker tracker, pid_t job, std::chrono::milliseconds period)
    : tracker_(std::move(tracker)),
      tree_(job),
      period_(period),
      slot_(std::make_shared<sampling::CallSlot>()) {
  // The thread holds its own reference to its slot: given up (stop()), it may outlive this monitor.
  thread_ = named_thread("ww-gpu-usage", [this, slot = slot_] {
    sampling::set_current_call_slot(slot.get());
    run();
  });
}

GpuUsageMonitor::~GpuUsageMonitor() {
  if (thread_.joinable()) stop();
}

void GpuUsageMonitor::run() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    tracker_.poll(tree_);
    lock.lock();
    wake_.wait_for(lock, period_, [this] { return stopping_; });
  }
  lock.unlock();
  tracker_.poll(tree_);  // the last look: a process still holding a context when the job ended
  lock.lock();
  done_ = true;
  wake_.notify_all();
}

std::vector<GpuUsage> GpuUsageMonitor::stop() {
  const MonotonicClock clock;
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  // A driver call that never returns (a GPU fallen off the bus) must not keep the job's measurement from
  // ending: past the sampler's limit the thread is given up (it parks should the call return) and the
  // rounds it completed are the answer.
  bool given_up = false;
  while (!done_ && !given_up) {
    wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; });
    if (!done_)
      given_up = slot_->give_up_if_begun_by(clock.now() - sampling::kDefaultHungCallAfter).has_value();
  }
  lock.unlock();
  if (given_up) {
    thread_.detach();
  } else if (thread_.joinable()) {
    thread_.join();
  }
  return tracker_.result();
}

std::vector<GpuUsage> usage_skeleton(hw::GpuSystem& system,
                                     const std::vector<std::size_t>& measured_positions,
                                     std::size_t job_gpu_count) {
  std::vector<GpuUsage> usage;
  for (std::size_t i = 0; i < system.count(); ++i) {
    GpuUsage u;
    u.gpu = system.gpu(i).identity();
    const auto at = std::find(measured_positions.begin(), measured_positions.end(), i);
    u.measured = at != measured_positions.end();
    u.expected = u.measured && static_cast<std::size_t>(at - measured_positions.begin()) < job_gpu_count;
    usage.push_back(u);
  }
  return usage;
}

}  // namespace wattwise::measure
