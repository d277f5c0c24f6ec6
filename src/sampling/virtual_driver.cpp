#include "sampling/virtual_driver.hpp"

#include "sampling/cadence_loop.hpp"

namespace wattwise::sampling {

VirtualDriver::VirtualDriver(Sampler& sampler, VirtualClock& clock) : sampler_(sampler), clock_(clock) {}

Nanos VirtualDriver::run_until(Nanos end, const SimulatedJob& job) {
  const Nanos start = clock_.now();
  sampler_.begin(start);
  CadenceLoop loop(sampler_, start);
  const bool has_job = static_cast<bool>(job.next_event);

  while (true) {
    std::optional<Nanos> job_due;
    if (has_job) {
      job_due = job.next_event();
      if (!job_due) break;  // the job has finished
    }
    const Nanos sampler_due = loop.next_due();
    const bool job_first = job_due && *job_due <= sampler_due;
    const Nanos when = job_first ? *job_due : sampler_due;
    if (when > end) {
      clock_.sleep_until(end);
      break;
    }
    clock_.sleep_until(when);
    if (job_first) {
      job.run_event(clock_.now());
      continue;
    }
    loop.run_due(clock_.now(), clock_);
  }
  const Nanos stopped = clock_.now();
  sampler_.finish(stopped);
  return stopped;
}

}  // namespace wattwise::sampling
