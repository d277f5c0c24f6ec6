#pragma once

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "../support/fake_gpu.hpp"
#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"

namespace wattwise::sampling::testing {

using wattwise::testing::FakeGpu;
using wattwise::testing::FakeGpuOptions;
using wattwise::testing::PowerFunction;

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

// A load that changes every `min_segment`-`max_segment` between 60 and 700 W (levels and lengths drawn from
// `rng`), from -6 s to 2 s past `duration`, with a +-5% wobble at 37 Hz that the 20 ms samples see and the
// counter's increments average: error bars must hold where the power moves within a counter posting, not
// only on square waves.
inline PowerFunction noisy_load(std::mt19937& rng, Nanos duration, std::chrono::milliseconds min_segment,
                                std::chrono::milliseconds max_segment) {
  using namespace std::chrono_literals;
  std::uniform_int_distribution<int> length_ms(static_cast<int>(min_segment.count()),
                                               static_cast<int>(max_segment.count()));
  std::uniform_real_distribution<double> level(60, 700);
  auto edges = std::make_shared<std::vector<std::pair<Nanos, double>>>();
  for (Nanos t = -6s; t < duration + 2s; t += std::chrono::milliseconds(length_ms(rng)))
    edges->emplace_back(t, level(rng));
  return [edges](Nanos t) {
    auto it = std::upper_bound(edges->begin(), edges->end(), t,
                               [](Nanos x, const std::pair<Nanos, double>& e) { return x < e.first; });
    const double base = it == edges->begin() ? edges->front().second : std::prev(it)->second;
    return base * (1 + 0.05 * std::sin(2 * M_PI * 37 * to_seconds(t)));
  };
}

}  // namespace wattwise::sampling::testing
