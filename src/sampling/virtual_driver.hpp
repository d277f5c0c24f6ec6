#pragma once

#include <functional>
#include <optional>

#include "core/clock.hpp"
#include "sampling/sampler.hpp"

namespace wattwise::sampling {

// A simulated job's events, interleaved with the sampler's ticks in time order.
struct SimulatedJob {
  // When the job's next event is due (absolute time); nullopt when the job has finished.
  std::function<std::optional<Nanos>()> next_event;
  // Runs the event that was due; the clock has been advanced to its time.
  std::function<void(Nanos now)> run_event;
};

// Runs a Sampler on simulated time, in one thread: it repeatedly picks the earliest due event (a job
// event, or the CadenceLoop's next due tick), advances the clock to it and runs it. Minutes of a simulated
// run complete in milliseconds, and tick times are exact, which the tests of drift-freedom rely on.
class VirtualDriver {
 public:
  VirtualDriver(Sampler& sampler, VirtualClock& clock);

  // From now until `end`, or until the job (if given) has no further event, whichever comes first:
  // begin(), the ticks, finish(). Returns the time it stopped at. On ties a job event runs first, so a
  // reading taken at the same instant sees the job's new state.
  Nanos run_until(Nanos end, const SimulatedJob& job = {});

 private:
  Sampler& sampler_;
  VirtualClock& clock_;
};

}  // namespace wattwise::sampling
