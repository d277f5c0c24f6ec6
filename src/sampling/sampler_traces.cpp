// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").
//
// The sampler's hand-off of what it kept: a copy of the recent trace while sampling goes on (the live
// window server, the folding of a long job's phases), the count of kept readings, and the whole traces
// at the end (or at each exporter scrape). The sampling itself is in sampler.cpp.

#include <mutex>
#include <utility>
#include <vector>

#include "sampling/sampler.hpp"

namespace wattwise::sampling {
namespace {

// The readings from `since` on, and the one before: readings are appended in time order (drained samples
// nearly so), so the copy starts from the back and costs only the window's length.
template <typename Reading>
std::vector<Reading> tail_since(const std::vector<Reading>& readings, Nanos since) {
  std::size_t first = readings.size();
  while (first > 0 && readings[first - 1].t >= since) --first;
  if (first > 0) --first;
  return {readings.begin() + static_cast<std::ptrdiff_t>(first), readings.end()};
}

}  // namespace

std::vector<GpuTrace> Sampler::snapshot_since(Nanos since) const {
  std::vector<GpuTrace> traces(gpus_.size());
  std::lock_guard lock(stores_mutex_);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    GpuTrace& trace = traces[i];
    trace.gpu_index = gpus_[i]->identity().index;
    trace.energy = tail_since(counters_.readings[i], since);
    trace.power_instant = tail_since(fast_.instant[i], since);
    trace.power_average = tail_since(fast_.average[i], since);
    trace.power_samples = tail_since(drain_.samples[i], since);
    for (const SampleGap& gap : drain_.gaps[i])
      if (gap.before >= since) trace.sample_gaps.push_back(gap);
    std::lock_guard failures_lock(failures_mutex_);
    trace.failure = failures_[i];
  }
  return traces;
}

std::size_t Sampler::kept_readings() const {
  std::lock_guard lock(stores_mutex_);
  std::size_t n = 0;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    n += counters_.readings[i].size() + fast_.instant[i].size() + fast_.average[i].size() +
         drain_.samples[i].size() + telemetry_.readings[i].size();
  }
  return n;
}

std::vector<GpuTrace> Sampler::take_traces() {
  std::vector<GpuTrace> traces(gpus_.size());
  std::lock_guard lock(stores_mutex_);
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    GpuTrace& trace = traces[i];
    trace.gpu_index = gpus_[i]->identity().index;
    trace.energy = std::move(counters_.readings[i]);
    trace.power_instant = std::move(fast_.instant[i]);
    trace.power_average = std::move(fast_.average[i]);
    trace.telemetry = std::move(telemetry_.readings[i]);
    trace.power_samples = std::move(drain_.samples[i]);
    trace.sample_gaps = std::move(drain_.gaps[i]);
    trace.late_counter_reads = counters_.late_reads[i];
    trace.max_counter_read_delay = counters_.max_delay[i];
    trace.thinned_held_up = counters_.thinned_held_up[i];
    trace.coarsened_peak_w =
        !trace.power_samples.empty() ? drain_.coarsened_peak_w[i] : fast_.coarsened_peak_w[i];
    for (const Health* health : {&counters_.health, &fast_.health, &telemetry_.health, &drain_.health})
      trace.failed_readings += health->failed_readings[i];
    std::lock_guard lock(failures_mutex_);
    trace.failure = failures_[i];
  }
  // A reader that takes the traces while sampling goes on (the exporter, every fraction of a second)
  // must not reset the runs of failures that decide when a GPU is given up.
  Health* const healths[] = {&counters_.health, &fast_.health, &telemetry_.health, &drain_.health};
  std::vector<std::vector<unsigned>> consecutive;
  for (const Health* health : healths) consecutive.push_back(health->consecutive);
  reset_stores();
  for (std::size_t h = 0; h < consecutive.size(); ++h) healths[h]->consecutive = std::move(consecutive[h]);
  return traces;
}

}  // namespace wattwise::sampling
