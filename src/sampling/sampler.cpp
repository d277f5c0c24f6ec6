#include "sampling/sampler.hpp"

#include <utility>

#include "core/error.hpp"

namespace wattwise::sampling {

Sampler::Sampler(std::vector<hw::Gpu*> gpus, Clock& clock, SamplerConfig config)
    : gpus_(std::move(gpus)),
      clock_(clock),
      config_(config),
      periods_(resolve_periods(config, gpus_.size())) {
  for (const hw::Gpu* gpu : gpus_) {
    if (gpu == nullptr) throw Error(ErrorKind::kInternal, "sampler was given a null GPU");
  }
  reset_stores();
}

void Sampler::reset_stores() {
  const std::size_t n = gpus_.size();
  counters_ = CounterStore{};
  counters_.readings.resize(n);
  fast_ = FastStore{};
  fast_.instant.resize(n);
  fast_.average.resize(n);
  telemetry_ = TelemetryStore{};
  telemetry_.readings.resize(n);
  const std::vector<std::uint64_t> seen = std::move(drain_.last_device_us);
  drain_ = DrainStore{};
  drain_.last_device_us = seen;
  drain_.last_device_us.resize(n, 0);
  drain_.samples.resize(n);
}

void Sampler::begin(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) read_counter(i, clock_.now());
  // Device stamps are CLOCK_REALTIME microseconds; anything stamped before `now` predates the measurement.
  const Nanos realtime_now = now + clock_.realtime_offset();
  const auto start_us = static_cast<std::uint64_t>(realtime_now.count() / 1000);
  for (auto& last : drain_.last_device_us) last = start_us;
  drain_.last_drain = now;
  drain_.drained_before = true;
}

void Sampler::read_counter(std::size_t gpu, Nanos before) {
  const std::optional<std::uint64_t> energy_mj = gpus_[gpu]->energy_mj();
  const Nanos after = clock_.now();
  if (energy_mj) counters_.readings[gpu].push_back(CounterReading{after, after - before, *energy_mj});
}

void Sampler::sample_counters(Nanos now) {
  if (gpus_.empty()) return;
  const std::size_t gpu = counters_.next_gpu;
  counters_.next_gpu = (gpu + 1) % gpus_.size();
  read_counter(gpu, now);
}

void Sampler::sample_fast(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    hw::Gpu& gpu = *gpus_[i];
    if (auto w = gpu.power_instant_w()) fast_.instant[i].push_back(PowerReading{now, *w});
    if (auto w = gpu.power_average_w()) fast_.average[i].push_back(PowerReading{now, *w});
  }
}

void Sampler::sample_telemetry(Nanos now) {
  if (!config_.read_telemetry) return;
  for (std::size_t i = 0; i < gpus_.size(); ++i)
    telemetry_.readings[i].push_back(TelemetryReading{now, gpus_[i]->telemetry()});
}

void Sampler::drain_samples(Nanos now) {
  if (drain_.drained_before && now - drain_.last_drain > kSampleBufferSpan) ++drain_.late_drains;
  drain_.last_drain = now;
  drain_.drained_before = true;
  // One offset per drain: CLOCK_REALTIME may be stepped (NTP) during a long run.
  const Nanos realtime_offset = clock_.realtime_offset();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    for (const hw::PowerSample& sample : gpus_[i]->power_samples_since(drain_.last_device_us[i])) {
      if (sample.device_time_us <= drain_.last_device_us[i]) continue;  // the driver may repeat the last one
      drain_.last_device_us[i] = sample.device_time_us;
      const Nanos realtime{static_cast<std::int64_t>(sample.device_time_us) * 1000};
      drain_.samples[i].push_back(PowerReading{realtime - realtime_offset, sample.power_w});
    }
  }
}

void Sampler::finish(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) read_counter(i, clock_.now());
  drain_samples(now);
}

std::vector<GpuTrace> Sampler::take_traces() {
  std::vector<GpuTrace> traces(gpus_.size());
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    GpuTrace& trace = traces[i];
    trace.gpu_index = gpus_[i]->identity().index;
    trace.energy = std::move(counters_.readings[i]);
    trace.power_instant = std::move(fast_.instant[i]);
    trace.power_average = std::move(fast_.average[i]);
    trace.telemetry = std::move(telemetry_.readings[i]);
    trace.power_samples = std::move(drain_.samples[i]);
  }
  reset_stores();
  return traces;
}

}  // namespace wattwise::sampling
