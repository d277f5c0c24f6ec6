#include "sampling/virtual_driver.hpp"

#include <array>

#include "sampling/periodic_schedule.hpp"

namespace wattwise::sampling {

VirtualDriver::VirtualDriver(Sampler& sampler, VirtualClock& clock) : sampler_(sampler), clock_(clock) {}

Nanos VirtualDriver::run_until(Nanos end, const SimulatedJob& job) {
  const Nanos start = clock_.now();
  sampler_.begin(start);
  const SamplerPeriods& p = sampler_.periods();
  // Same phases as the threaded driver: begin() already read every counter at `start`.
  PeriodicSchedule counter(start + p.counter_tick, p.counter_tick);
  PeriodicSchedule fast(start, p.fast);
  PeriodicSchedule drain(start + p.drain, p.drain);
  PeriodicSchedule telemetry(start, p.telemetry);
  const bool has_job = static_cast<bool>(job.next_event);

  while (true) {
    std::optional<Nanos> job_due;
    if (has_job) {
      job_due = job.next_event();
      if (!job_due) break;  // the job has finished
    }
    PeriodicSchedule* due = &counter;
    for (PeriodicSchedule* s : std::array{&fast, &drain, &telemetry}) {
      if (s->next_due() < due->next_due()) due = s;
    }
    const bool job_first = job_due && *job_due <= due->next_due();
    const Nanos when = job_first ? *job_due : due->next_due();
    if (when > end) {
      clock_.sleep_until(end);
      break;
    }
    clock_.sleep_until(when);
    if (job_first) {
      job.run_event(clock_.now());
      continue;
    }
    if (due == &counter) sampler_.sample_counters(clock_.now());
    if (due == &fast) sampler_.sample_fast(clock_.now());
    if (due == &drain) sampler_.drain_samples(clock_.now());
    if (due == &telemetry) sampler_.sample_telemetry(clock_.now());
    due->advance(clock_.now());
  }
  const Nanos stopped = clock_.now();
  sampler_.finish(stopped);
  return stopped;
}

}  // namespace wattwise::sampling
