#include "sampling/cadence_loop.hpp"

#include <algorithm>

namespace wattwise::sampling {

CadenceLoop::CadenceLoop(Sampler& sampler, Nanos start)
    : sampler_(sampler),
      fast_(start, sampler.periods().fast),
      // begin() has just marked the buffered samples as seen: the first drain is one period later.
      drain_(start + sampler.periods().drain, sampler.periods().drain),
      telemetry_(start, sampler.periods().telemetry) {}

Nanos CadenceLoop::next_due() const {
  return std::min({sampler_.next_counter_read(), fast_.next_due(), drain_.next_due(), telemetry_.next_due()});
}

std::uint64_t CadenceLoop::run_due(Nanos now, Clock& clock) {
  std::uint64_t skipped = 0;
  sampler_.apply_dense_request(now);
  if (sampler_.next_counter_read() <= now) sampler_.sample_counters(now);
  if (fast_.next_due() <= now) {
    sampler_.sample_fast(clock.now());
    skipped += fast_.advance(clock.now());
  }
  if (telemetry_.next_due() <= now) {
    sampler_.sample_telemetry(clock.now());
    skipped += telemetry_.advance(clock.now());
  }
  if (drain_.next_due() <= now) {
    sampler_.drain_samples(clock.now());
    skipped += drain_.advance(clock.now());
  }
  return skipped;
}

}  // namespace wattwise::sampling
