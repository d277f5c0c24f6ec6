#pragma once

#include <cstdint>

#include "core/clock.hpp"
#include "sampling/periodic_schedule.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {

// All of a Sampler's cadences in one loop, for one thread: the fast, telemetry and drain ticks on their
// fixed grids (start + k * period) and each GPU's counter reads on its own schedule. One thread for every
// GPU and cadence: the counter reads are the bill (~4 ms each), and the rest costs microseconds, so more
// threads bought nothing but wake-ups. A counter read delays the other ticks by its ~4 ms at most per GPU.
class CadenceLoop {
 public:
  // After Sampler::begin(start).
  CadenceLoop(Sampler& sampler, Nanos start);

  Nanos next_due() const;
  // Runs every cadence due at `now` (counters first: a read is placed just after a posting); `clock`
  // gives the time each tick finished. Returns the ticks of fixed cadences skipped because of overruns.
  std::uint64_t run_due(Nanos now, Clock& clock);

 private:
  Sampler& sampler_;
  PeriodicSchedule fast_;
  PeriodicSchedule drain_;
  PeriodicSchedule telemetry_;
};

}  // namespace wattwise::sampling
