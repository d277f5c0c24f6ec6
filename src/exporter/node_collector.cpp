#include "exporter/node_collector.hpp"

#include <algorithm>

namespace wattwise::exporter {
namespace {

// A harvest this many periods late means the sampling thread is stuck or gone: /health says so.
// At least kMinStallTime: a loaded node may deschedule the thread for a second without anything wrong.
constexpr int kLateHarvests = 8;
constexpr Nanos kMinStallTime = std::chrono::seconds(5);

}  // namespace

NodeCollector::NodeCollector(std::vector<hw::GpuReadings*> gpus, Clock& clock, CollectorOptions options)
    : gpus_(std::move(gpus)), clock_(clock), options_(std::move(options)), state_(gpus_.size()) {
  sampler_ = std::make_unique<sampling::Sampler>(gpus_, clock_, options_.sampler);
  driver_ = std::make_unique<sampling::ThreadedDriver>(*sampler_, clock_);
  driver_->every(options_.harvest_period, [this](Nanos now) { harvest(now); });
}

NodeCollector::~NodeCollector() {
  try {
    stop();
  } catch (...) {
    // A destructor must not throw; stop() already ended the sampling thread.
  }
}

void NodeCollector::start() {
  // Before the sampling thread exists, this thread may call the GPUs: the first limits are there at once.
  poll_gpus(clock_.now());
  next_poll_ = clock_.now() + options_.job_poll_period;
  driver_->start();
  last_harvest_ns_ = clock_.now().count();
  running_ = true;
}

void NodeCollector::stop() {
  if (!running_.exchange(false)) return;
  driver_->stop();
}

void NodeCollector::harvest(Nanos now) {
  std::vector<sampling::GpuTrace> traces = sampler_->take_traces();
  const auto& schedules = sampler_->counter_schedules();
  for (std::size_t i = 0; i < traces.size() && i < schedules.size(); ++i) {
    if (const auto& grid = schedules[i].grid()) place_counter_reads_on_postings(traces[i].energy, *grid);
  }
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < traces.size(); ++i) {
      state_[i].energy.add(traces[i]);
      if (!traces[i].telemetry.empty()) state_[i].telemetry = traces[i].telemetry.back().values;
    }
  }
  if (now >= next_poll_) {
    poll_gpus(now);
    next_poll_ = now + options_.job_poll_period;
  }
  last_harvest_ns_ = clock_.now().count();
}

void NodeCollector::poll_gpus(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (sampler_->failed(i)) continue;
    std::optional<double> limit_w;
    std::vector<JobId> job_ids;
    try {
      if (const auto limits = gpus_[i]->power_limits()) limit_w = limits->current_w;
      if (const auto processes = gpus_[i]->compute_processes()) {
        for (const hw::GpuProcess& process : *processes) {
          if (auto id = job_id_of_process(process.pid, options_.proc)) job_ids.push_back(std::move(*id));
        }
      }
    } catch (const std::exception&) {
      // A failed poll costs this second's job attribution; the sampler decides whether the GPU is lost.
    }
    std::lock_guard lock(mutex_);
    GpuState& state = state_[i];
    if (limit_w) state.power_limit_w = limit_w;
    const double total_j = state.energy.joules_at(now);
    const double bar_j = state.energy.committed_uncertainty_j();
    jobs_.add(std::move(job_ids), total_j - state.polled_j, now, bar_j - state.polled_bar_j);
    state.polled_j = total_j;
    state.polled_bar_j = bar_j;
  }
}

NodeSnapshot NodeCollector::snapshot() {
  const Nanos now = clock_.now();
  NodeSnapshot snapshot;
  snapshot.hostname = options_.hostname;
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    GpuState& state = state_[i];
    GpuSnapshot gpu;
    gpu.identity = gpus_[i]->identity();
    gpu.up = !sampler_->failed(i);
    gpu.energy_j = state.energy.joules_at(now);
    gpu.energy_uncertainty_j = state.energy.uncertainty_j_at(now);
    if (gpu.up) gpu.power_w = state.energy.last_power_w();
    gpu.power_limit_w = state.power_limit_w;
    gpu.telemetry = state.telemetry;
    gpu.counter_breaks = state.energy.counter_breaks();
    snapshot.gpus.push_back(std::move(gpu));
  }
  snapshot.jobs = jobs_.jobs();
  snapshot.jobs_evicted_scheduler = jobs_.evicted(JobSource::kScheduler);
  snapshot.jobs_evicted_user = jobs_.evicted(JobSource::kUser);
  return snapshot;
}

std::string NodeCollector::metrics_text() {
  return render(node_metrics(snapshot()));
}

bool NodeCollector::healthy() const {
  if (!running_) return false;
  const Nanos since_harvest = clock_.now() - Nanos{last_harvest_ns_.load()};
  if (since_harvest > std::max(options_.harvest_period * kLateHarvests, kMinStallTime)) return false;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!sampler_->failed(i)) return true;
  }
  return gpus_.empty();
}

}  // namespace wattwise::exporter
