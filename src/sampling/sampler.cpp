// HAZARD ZONE (counter schedule and timeline). A mistake here makes energy figures wrong without saying so.
// Before a change here lands, run test_sampling, `ctest -L e2e`, bench_sampler_cpu and the load test
// (-DWATTWISE_LOAD_TEST=ON, `ctest -L load`) (Release build; docs/architecture.md "Hazard zones").

#include "sampling/sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <iterator>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "sampling/hung_call.hpp"

namespace wattwise::sampling {
namespace {

bool same_value(const CounterReading& a, const CounterReading& b) {
  return a.energy_mj == b.energy_mj;
}
// Power computed as energy differences (a simulated GPU's, some drivers') wobbles in its last bits on a
// flat line; within this relative distance of the run's first reading a power counts as a repeat. Every
// reading dropped lies within it of the ones kept, so no integral moves by more than this fraction.
constexpr double kRepeatedPowerTolerance = 1e-9;

bool same_value(const PowerReading& a, const PowerReading& b) {
  return std::fabs(a.power_w - b.power_w) <= kRepeatedPowerTolerance * std::fabs(a.power_w);
}
bool same_value(const TelemetryReading& a, const TelemetryReading& b) {
  const hw::Telemetry& x = a.values;
  const hw::Telemetry& y = b.values;
  return x.sm_clock_mhz == y.sm_clock_mhz && x.mem_clock_mhz == y.mem_clock_mhz &&
         x.util_gpu_pct == y.util_gpu_pct && x.util_mem_pct == y.util_mem_pct && x.temp_c == y.temp_c &&
         x.pstate == y.pstate && x.throttle_reasons == y.throttle_reasons &&
         x.pcie_tx_mbps == y.pcie_tx_mbps && x.pcie_rx_mbps == y.pcie_rx_mbps &&
         x.mem_used_mib == y.mem_used_mib;
}

}  // namespace

template <typename Reading>
void Sampler::record(std::vector<Reading>& readings, const Reading& reading, bool drop_repeats) {
  const std::size_t n = readings.size();
  // The last two equal to the new one: the last is an inner reading of a run; the new one takes its place.
  // readings[n - 2] is the run's first, so a slow drift cannot creep through the tolerance.
  if (drop_repeats && n >= 2 && same_value(readings[n - 2], reading) &&
      same_value(readings[n - 2], readings[n - 1])) {
    readings[n - 1] = reading;
    return;
  }
  readings.push_back(reading);
}

Sampler::Sampler(std::vector<hw::GpuReadings*> gpus, Clock& clock, SamplerConfig config)
    : gpus_(std::move(gpus)),
      clock_(clock),
      config_(config),
      periods_(resolve_periods(config, gpus_.size())) {
  for (const hw::GpuReadings* gpu : gpus_) {
    if (gpu == nullptr) throw Error(ErrorKind::kInternal, "sampler was given a null GPU");
  }
  failed_ = std::make_unique<std::atomic<bool>[]>(gpus_.size());
  failures_.resize(gpus_.size());
  costs_.resize(gpus_.size());
  for (std::size_t i = 0; i < gpus_.size(); ++i) costs_[i].gpu_index = gpus_[i]->identity().index;
  last_pcie_.resize(gpus_.size());
  reset_stores();
}

template <typename Call>
auto Sampler::timed(std::size_t gpu, GpuCall kind, Call&& call) {
  CallTimer timer(costs_[gpu].calls[static_cast<std::size_t>(kind)], clock_);
  const WatchedCall watched(gpu, to_string(kind),
                            clock_);  // after the timer: a thread given up never reaches it
  return call();
}

std::vector<GpuSamplerCost> Sampler::cost() const {
  std::vector<GpuSamplerCost> costs = costs_;
  for (std::size_t i = 0; i < costs.size() && i < schedules_.size(); ++i) {
    costs[i].counter = schedules_[i].stats();
    if (schedules_[i].grid()) costs[i].posting_period = schedules_[i].grid()->period;
  }
  return costs;
}

bool Sampler::failed(std::size_t position) const {
  return failed_[position].load(std::memory_order_acquire);
}

void Sampler::mark_hung(const HungCall& hung, Nanos limit) {
  mark_failed(hung.gpu, true,
              fmt::format("a driver call ({}) has not returned for {:.1f} s: the GPU is taken as lost "
                          "from that call's start",
                          hung.call, to_seconds(limit)),
              hung.since);
}

void Sampler::mark_failed(std::size_t gpu, bool gpu_lost, const std::string& error,
                          std::optional<Nanos> hung_since) {
  const SourceFailure failure{hung_since.value_or(clock_.now()), gpu_lost, error, hung_since.has_value()};
  {
    std::lock_guard lock(failures_mutex_);
    if (failures_[gpu]) return;  // another cadence was first
    failures_[gpu] = failure;
    failed_[gpu].store(true, std::memory_order_release);
  }
  if (on_failure_) on_failure_(gpu, failure);
}

template <typename Read>
bool Sampler::guarded(std::size_t gpu, Health& health, Read&& read) {
  if (failed(gpu)) return false;
  try {
    read();
    health.consecutive[gpu] = 0;
    return true;
  } catch (const hw::GpuLostError& e) {
    mark_failed(gpu, true, e.what());
  } catch (const std::exception& e) {
    // Any other failure of a reading (the driver's UNKNOWN or TIMEOUT, or worse): this reading is lost.
    ++health.failed_readings[gpu];
    if (++health.consecutive[gpu] >= kMaxConsecutiveFailures) {
      mark_failed(
          gpu, false,
          fmt::format("{} readings in a row failed, the last: {}", kMaxConsecutiveFailures, e.what()));
    }
  }
  return false;
}

void Sampler::reset_stores() {
  const std::size_t n = gpus_.size();
  counters_ = CounterStore{};
  counters_.readings.resize(n);
  counters_.late_reads.assign(n, 0);
  counters_.max_delay.assign(n, Nanos{0});
  counters_.thinned_held_up.assign(n, HeldUpCalls{});
  counters_.coarsened.assign(n, 0);
  fast_ = FastStore{};
  fast_.instant.resize(n);
  fast_.thinned.assign(n, 0);
  fast_.coarsened.assign(n, 0);
  fast_.coarsened_peak_w.assign(n, std::nullopt);
  fast_.average.resize(n);
  fast_.average_coarsened.assign(n, 0);
  telemetry_ = TelemetryStore{};
  telemetry_.readings.resize(n);
  telemetry_.thinned.assign(n, 0);
  telemetry_.coarsened.assign(n, 0);
  const std::vector<std::uint64_t> seen = std::move(drain_.last_device_us);
  const std::vector<std::optional<Nanos>> drained = std::move(drain_.last_drained);
  const std::vector<Nanos> seen_at = std::move(drain_.last_sample_t);
  drain_ = DrainStore{};
  drain_.last_device_us = seen;
  drain_.last_device_us.resize(n, 0);
  drain_.last_sample_t = seen_at;
  drain_.last_sample_t.resize(n);
  drain_.last_drained = drained;
  drain_.last_drained.resize(n);
  drain_.samples.resize(n);
  drain_.gaps.resize(n);
  drain_.compacted.assign(n, 0);
  drain_.coarsened.assign(n, 0);
  drain_.coarsened_peak_w.assign(n, std::nullopt);
  for (Health* health : {&counters_.health, &fast_.health, &telemetry_.health, &drain_.health}) {
    health->consecutive.assign(n, 0);
    health->failed_readings.assign(n, 0);
  }
}

void Sampler::begin(Nanos now) {
  schedules_.clear();
  counter_read_at_.assign(gpus_.size(), now);
  const auto n = static_cast<std::int64_t>(std::max<std::size_t>(gpus_.size(), 1));
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    CounterScheduleConfig schedule;
    schedule.postings_per_read = config_.postings_per_read;
    if (!periods_.counter_phase_locked) {
      // Fixed reads of the GPUs take turns, spread evenly over the period.
      schedule.fixed_period = periods_.counter_per_gpu;
      schedule.fixed_offset = now + periods_.counter_per_gpu * static_cast<std::int64_t>(i) / n;
    }
    schedules_.emplace_back(schedule, now);
  }
  // Device stamps are CLOCK_REALTIME microseconds; anything stamped before `now` predates the measurement.
  const Nanos offset_now = clock_.realtime_offset();
  const Nanos realtime_now = now + offset_now;
  const auto start_us = static_cast<std::uint64_t>(realtime_now.count() / 1000);
  for (auto& last : drain_.last_device_us) last = start_us;
  drain_.last_sample_t.assign(gpus_.size(), Nanos{static_cast<std::int64_t>(start_us) * 1000} - offset_now);
  drain_.last_drained.assign(gpus_.size(), now);
  // Last: should a read never return (hung_call.hpp), the cadences go on from here with the state set.
  for (std::size_t i = 0; i < gpus_.size(); ++i) read_counter(i, clock_.now());
}

void Sampler::read_counter(std::size_t gpu, Nanos before) {
  std::optional<std::uint64_t> energy_mj;
  guarded(gpu, counters_.health, [&] {
    energy_mj = timed(gpu, GpuCall::kEnergyCounter, [&] { return gpus_[gpu]->energy_mj(); });
    const Nanos after = clock_.now();
    if (!energy_mj) return;
    std::lock_guard lock(stores_mutex_);
    record(counters_.readings[gpu], CounterReading{after, after - before, *energy_mj},
           config_.drop_repeated_readings);
    // The held-up reads it thins away are counted first: the measurement's count is of every read.
    coarsen_old(counters_.readings[gpu], counters_.coarsened[gpu], nullptr,
                [&thinned = counters_.thinned_held_up[gpu]](std::vector<CounterReading>& r, std::size_t from,
                                                            std::size_t to, const CompactionRule& rule) {
                  const HeldUpCalls before = held_up_calls(r, from, to);
                  const std::size_t kept_to = thin_counter_reads(r, from, to, rule);
                  thinned.reads += before.reads - held_up_calls(r, from, kept_to).reads;
                  thinned.longest = std::max(thinned.longest, before.longest);
                  return kept_to;
                },
                nullptr);
  });
  if (gpu < schedules_.size()) {
    schedules_[gpu].on_read(before, clock_.now(), energy_mj);
    counter_read_at_[gpu] = before;
  }
}

// At most kConcurrentLearners GPUs learn their posting grids at once: bursts of reads 13 ms apart on one
// thread leave little room for more, and reads delayed by other GPUs' give brackets too wide to lock on.
// Two learn together, so that a two-GPU job has both grids within its first few tenths of a second. A GPU
// waiting for its turn is read as if blind, every k assumed postings.
constexpr std::size_t kConcurrentLearners = 2;

Nanos Sampler::counter_due(std::size_t gpu) const {
  const CounterSchedule& schedule = schedules_[gpu];
  if (schedule.mode() != CounterSchedule::Mode::kLearning) return schedule.next_read();
  std::size_t learners_before = 0;
  for (std::size_t i = 0; i < gpu; ++i)
    learners_before += !failed(i) && schedules_[i].mode() == CounterSchedule::Mode::kLearning;
  if (learners_before < kConcurrentLearners) return schedule.next_read();
  return std::max(schedule.next_read(),
                  counter_read_at_[gpu] + kAssumedPostingPeriod * config_.postings_per_read);
}

Nanos Sampler::next_counter_read() const {
  Nanos next = Nanos::max();
  for (std::size_t i = 0; i < schedules_.size(); ++i) {
    if (!failed(i)) next = std::min(next, counter_due(i));
  }
  return next;
}

void Sampler::sample_counters(Nanos now) {
  for (std::size_t i = 0; i < schedules_.size(); ++i) {
    if (failed(i) || counter_due(i) > now) continue;
    const Nanos before = clock_.now();
    // Late against when it was due, or against the last pass when it became due only since (a GPU waiting
    // for its turn to learn is due again at once when its turn comes: not a late thread).
    const Nanos delay = before - std::max(counter_due(i), last_counter_pass_);
    if (delay >= kLateCounterRead) {
      std::lock_guard lock(stores_mutex_);
      ++counters_.late_reads[i];
      counters_.max_delay[i] = std::max(counters_.max_delay[i], delay);
    }
    read_counter(i, before);
  }
  last_counter_pass_ = now;
}

void Sampler::sample_fast(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    hw::GpuReadings& gpu = *gpus_[i];
    guarded(i, fast_.health, [&] {
      // The ~1 s averaged power is kept only where there is no instantaneous power: where there is, no
      // figure uses it (it lost 10% under a changing load), and it was a third of the kept trace.
      // The instantaneous field changes every ~100 ms and is read every 20 ms: of a run of equal values only
      // the first and last are kept, which integrates the same (trapezoid) at two fifths of the memory.
      if (auto w = timed(i, GpuCall::kPowerInstant, [&] { return gpu.power_instant_w(); })) {
        std::lock_guard lock(stores_mutex_);
        record(fast_.instant[i], PowerReading{now, *w},
               config_.drop_repeated_readings || config_.drop_repeated_instant_and_telemetry);
        thin_old_readings(fast_.instant[i], fast_.thinned[i], now);
        coarsen_old(fast_.instant[i], fast_.coarsened[i], window_edges_ ? &fast_.thinned[i] : nullptr,
                    thin_point_readings<PowerReading>, &fast_.coarsened_peak_w[i]);
      } else if (auto a = timed(i, GpuCall::kPowerAverage, [&] { return gpu.power_average_w(); })) {
        std::lock_guard lock(stores_mutex_);
        record(fast_.average[i], PowerReading{now, *a}, config_.drop_repeated_readings);
        coarsen_old(fast_.average[i], fast_.average_coarsened[i], nullptr, thin_point_readings<PowerReading>,
                    nullptr);
      }
    });
  }
}

hw::Telemetry Sampler::read_telemetry(std::size_t gpu, Nanos now) {
  hw::Telemetry t = timed(gpu, GpuCall::kTelemetry, [&] { return gpus_[gpu]->telemetry_without_pcie(); });
  if (periods_.pcie && now >= next_pcie_read_)
    last_pcie_[gpu] = timed(gpu, GpuCall::kPcieThroughput, [&] { return gpus_[gpu]->pcie_throughput(); });
  t.pcie_tx_mbps = last_pcie_[gpu].tx_mbps;
  t.pcie_rx_mbps = last_pcie_[gpu].rx_mbps;
  return t;
}

void Sampler::sample_telemetry(Nanos now) {
  if (!config_.read_telemetry) return;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    guarded(i, telemetry_.health, [&] {
      record(telemetry_.readings[i], TelemetryReading{now, read_telemetry(i, now)},
             config_.drop_repeated_readings || config_.drop_repeated_instant_and_telemetry);
      thin_old_readings(telemetry_.readings[i], telemetry_.thinned[i], now);
      coarsen_old(telemetry_.readings[i], telemetry_.coarsened[i],
                  window_edges_ ? &telemetry_.thinned[i] : nullptr, thin_point_readings<TelemetryReading>,
                  nullptr);
    });
  }
  if (periods_.pcie && now >= next_pcie_read_) next_pcie_read_ = now + *periods_.pcie;
}

void Sampler::drain_samples(Nanos now) {
  // Later than the buffer holds: the samples between the last one seen and the oldest still buffered were
  // dropped; where, is kept with the trace (its windows' bars cover the gap: EnergyAccounting). Late since
  // the GPU's last drain that succeeded: a failed one drained nothing.
  const auto late = [&](std::size_t i) {
    return drain_.last_drained[i] && now - *drain_.last_drained[i] > kSampleBufferSpan;
  };
  bool any_late = false;
  for (std::size_t i = 0; i < gpus_.size(); ++i) any_late = any_late || (!failed(i) && late(i));
  if (any_late) ++drain_.late_drains;
  // One offset per drain: CLOCK_REALTIME may be stepped (NTP) during a long run.
  const Nanos realtime_offset = clock_.realtime_offset();
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    // A failed drain loses nothing while the next one comes within the buffer's span.
    guarded(i, drain_.health, [&] {
      const std::vector<hw::PowerSample> samples = timed(
          i, GpuCall::kPowerSamples, [&] { return gpus_[i]->power_samples_since(drain_.last_device_us[i]); });
      std::lock_guard lock(stores_mutex_);
      const auto on_samples_time = [&](std::uint64_t device_us) {
        return Nanos{static_cast<std::int64_t>(device_us) * 1000} - realtime_offset;
      };
      const auto first = std::find_if(samples.begin(), samples.end(), [&](const hw::PowerSample& sample) {
        return sample.device_time_us > drain_.last_device_us[i];  // the driver may repeat the last
      });
      // Late, a drain may still have lost nothing (the buffer held more, or the oldest sample left is the
      // next one): a gap only where the first new sample is further from the last seen than 1.5 of the
      // device's sample spacing (the first two new samples'), so no GPU is called starved for nothing.
      if (late(i) && first != samples.end()) {
        const std::uint64_t step = first->device_time_us - drain_.last_device_us[i];
        const auto second = std::next(first);
        if (second == samples.end() || 2 * step > 3 * (second->device_time_us - first->device_time_us))
          drain_.gaps[i].push_back({drain_.last_sample_t[i], on_samples_time(first->device_time_us)});
      }
      for (auto sample = first; sample != samples.end(); ++sample) {
        if (sample->device_time_us <= drain_.last_device_us[i]) continue;
        drain_.last_device_us[i] = sample->device_time_us;
        drain_.last_sample_t[i] = on_samples_time(sample->device_time_us);
        record(drain_.samples[i], PowerReading{drain_.last_sample_t[i], sample->power_w},
               config_.drop_repeated_readings);
      }
      drain_.last_drained[i] = now;
      compact_old_samples(i, now);
    });
  }
}

template <typename Reading>
std::optional<std::size_t> Sampler::old_readings_end(const std::vector<Reading>& readings, std::size_t done,
                                                     Nanos now) const {
  const Nanos cutoff = now - *config_.compact_samples_after;
  if (done >= readings.size() || readings[done].t + kCompactionBatch > cutoff) return std::nullopt;
  const auto old_end = std::partition_point(readings.begin() + static_cast<std::ptrdiff_t>(done),
                                            readings.end(), [&](const Reading& r) { return r.t < cutoff; });
  // The last old reading stays as it is: it is the left edge of the first one not yet compacted.
  const auto to = static_cast<std::size_t>(old_end - readings.begin());
  if (to == 0) return std::nullopt;
  return to - 1;
}

void Sampler::compact_old_samples(std::size_t gpu, Nanos now) {
  std::vector<PowerReading>& samples = drain_.samples[gpu];
  std::size_t& done = drain_.compacted[gpu];
  if (config_.compact_samples_after) {
    if (const auto end = old_readings_end(samples, done, now))
      done = compact_samples(samples, done, *end, compaction_rule(samples[done].t, samples[*end].t));
  }
  coarsen_old(samples, drain_.coarsened[gpu], config_.compact_samples_after ? &done : nullptr, compact_samples,
              &drain_.coarsened_peak_w[gpu]);
}

void Sampler::coarsen_before(Nanos before) {
  std::int64_t current = coarse_before_ns_.load();
  while (before.count() > current && !coarse_before_ns_.compare_exchange_weak(current, before.count())) {
  }
}

template <typename Reading, typename Thin>
void Sampler::coarsen_old(std::vector<Reading>& readings, std::size_t& coarsened, std::size_t* limit, Thin thin,
                          std::optional<double>* peak_w) {
  const std::int64_t before_ns = coarse_before_ns_.load(std::memory_order_relaxed);
  if (before_ns == std::numeric_limits<std::int64_t>::min()) return;
  const Nanos before{before_ns};
  if (coarsened >= readings.size() || readings[coarsened].t + kCompactionBatch > before) return;
  const auto old_end = std::partition_point(readings.begin() + static_cast<std::ptrdiff_t>(coarsened),
                                            readings.end(), [&](const Reading& r) { return r.t < before; });
  // As the finer pass: the last old reading stays, the left edge of the first one not coarsened.
  std::size_t to = static_cast<std::size_t>(old_end - readings.begin());
  if (to == 0) return;
  to -= 1;
  if (limit) to = std::min(to, *limit);
  if (to <= coarsened) return;
  if constexpr (std::is_same_v<Reading, PowerReading>) {
    if (peak_w) {
      for (std::size_t k = std::max<std::size_t>(coarsened, 1); k < to; ++k)
        *peak_w = std::max(peak_w->value_or(readings[k].power_w), readings[k].power_w);
    }
  }
  CompactionRule rule;
  rule.steady_only = false;
  rule.span = kCoarseSpan;
  if (coarse_edges_) rule.window_edges = coarse_edges_(readings[coarsened].t - kCoarseSpan, readings[to].t + kCoarseSpan);
  const std::size_t new_to = thin(readings, coarsened, to, rule);
  if (limit) *limit -= to - new_to;
  coarsened = new_to;
}

// The instantaneous power changes every ~100 ms (two readings kept per change, ~28 MB a GPU-day on a
// moving load), and a real GPU's telemetry at nearly every reading: old readings are thinned like the
// samples, but only where window edges are known.
template <typename Reading>
void Sampler::thin_old_readings(std::vector<Reading>& readings, std::size_t& done, Nanos now) {
  if (!config_.compact_samples_after || !window_edges_) return;
  if (const auto end = old_readings_end(readings, done, now))
    done = thin_point_readings(readings, done, *end, compaction_rule(readings[done].t, readings[*end].t));
}

CompactionRule Sampler::compaction_rule(Nanos from, Nanos to) const {
  CompactionRule rule;
  if (window_edges_) {
    rule.steady_only = false;
    rule.window_edges = window_edges_(from - kProtectedSpan, to + kProtectedSpan);
  }
  return rule;
}

void Sampler::apply_dense_request(Nanos now) {
  if (!dense_reads_requested_.exchange(false)) return;
  for (CounterSchedule& schedule : schedules_) schedule.relearn(now);
}

void Sampler::finish(Nanos now) {
  for (std::size_t i = 0; i < gpus_.size(); ++i) read_counter(i, clock_.now());
  drain_samples(now);
}

}  // namespace wattwise::sampling
