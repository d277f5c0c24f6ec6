#pragma once

#include <memory>

#include "fake_gpu.hpp"
#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"

namespace wattwise::sampling::testing {

// One fake GPU sampled on a virtual clock from 0 to `duration`; the device has been up since -5 s.
struct Simulation {
  std::unique_ptr<VirtualClock> clock;
  std::unique_ptr<FakeGpu> gpu;
  GpuTrace trace;
};

// `window_edges`, when set, tells the sampler where windows will be cut (Sampler::set_window_edges).
inline Simulation simulate(PowerFunction power, FakeGpuOptions options, Nanos duration,
                           SamplerConfig config = {}, Sampler::WindowEdges window_edges = {}) {
  Simulation sim;
  sim.clock = std::make_unique<VirtualClock>(0ns);
  sim.gpu = std::make_unique<FakeGpu>(*sim.clock, std::move(power), options, sim.clock.get(), -5s);
  Sampler sampler({sim.gpu.get()}, *sim.clock, config);
  if (window_edges) sampler.set_window_edges(std::move(window_edges));
  VirtualDriver(sampler, *sim.clock).run_until(duration);
  sim.trace = std::move(sampler.take_traces().front());
  return sim;
}

// On for `on`, off for `off`, repeating from time 0.
inline PowerFunction square_wave(double on_w, Nanos on, double off_w, Nanos off) {
  return [=](Nanos t) {
    const Nanos period = on + off;
    Nanos phase = t % period;
    if (phase < 0ns) phase += period;
    return phase < on ? on_w : off_w;
  };
}

}  // namespace wattwise::sampling::testing
