#pragma once

#include <deque>

#include "core/clock.hpp"
#include "sim/drift.hpp"

namespace wattwise::sim {

// A GPU's power as a piecewise-constant function of time, with its exact integral and the temperature it
// drives. Every simulated reading (counter, instantaneous, averaged, 20 ms samples) is cut from this one
// function, so they agree with each other exactly the way the hardware's do. Segments may start in the
// future (a scheduled change, e.g. the end of an overshoot); setting a new power at t replaces everything
// from t on. Before the first segment the first power is assumed to have held forever. With a Drift, the
// power is each segment's power times the drift's factor (measured from the timeline's start), and the
// integral stays exact (the drift's own integral); the temperature follows the segments' power alone.
class PowerTimeline {
 public:
  struct Thermal {
    double ambient_c = 25;
    double c_per_w = 0.1;
    double tau_s = 60;
  };

  PowerTimeline(Nanos start, double power_w, Thermal thermal, Drift drift = {});

  // From `t` on, the power is `power_w` (until a later call).
  void set_power_from(Nanos t, double power_w);

  double power_w_at(Nanos t) const;
  double energy_j_at(Nanos t) const;  // since the timeline's start (negative before it)
  double temperature_c_at(Nanos t) const;
  // Forgets segments that ended before `t`; queries before `t` are then no longer exact.
  void forget_before(Nanos t);

 private:
  struct Segment {
    Nanos start{0};
    double power_w = 0;
    double energy_j = 0;       // integral up to `start`
    double temperature_c = 0;  // at `start`
  };
  const Segment& segment_at(Nanos t) const;
  double temperature_after(const Segment& segment, Nanos t) const;

  double drift_integral_s(Nanos t) const;  // the drift's integral since the start, in seconds

  Thermal thermal_;
  Drift drift_;
  Nanos origin_;
  std::deque<Segment> segments_;
};

}  // namespace wattwise::sim
