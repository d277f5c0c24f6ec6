#pragma once

// The slow drift a real GPU's power shows while one setting holds (docs/tune.md "Drift"): warm-up
// (power, and so energy per iteration, rising by a few percent over the first one or two minutes, as the
// board heats and its leakage grows; exponential) and a slow wander (about 1% over minutes: cooling, the
// room, the clocks' own control). A multiplier on the model's power, a function of the time since the GPU
// (or the simulated job) started, with its exact integral, so every reading cut from the power timeline
// stays exact. The per-iteration noise that comes with it (neighbouring iterations alike,
// iteration_correlation) is drawn by the tuning simulator (tune/simulated_tune.hpp), which simulates single
// iterations; the GPU simulator's runs are whole.
//
// Off unless asked for: a DriftSpec{} is no drift, so tests that need the model's exact numbers get them;
// every benchmark of sweeps and tuning asks for DriftSpec::typical().

#include <array>
#include <cstdint>

namespace wattwise::sim {

struct DriftSpec {
  // Warm-up: the factor starts at 1 - warmup_fraction and rises to 1 with time constant warmup_tau_s
  // (95% of the way in three of them).
  double warmup_fraction = 0;
  double warmup_tau_s = 30;
  // Slow wander: a sum of slow sines (periods of minutes, seeded phases and amplitudes) whose peak-to-peak
  // excursion is about wander_fraction.
  double wander_fraction = 0;
  // Of the per-iteration noise in the tuning simulator: how much of one iteration's deviation carries over
  // to the next (AR(1) coefficient; an H100 training job shows ~0.4).
  double iteration_correlation = 0;

  // What an H100 shows (docs/evidence/sampler-h100.md, issue 21): +2.5% over the first ~1.5 minutes, ~1%
  // wander over minutes, lag-1 correlation 0.4 between neighbouring iterations.
  static DriftSpec typical() { return DriftSpec{0.025, 30, 0.01, 0.4}; }
  // Warm-up or wander (the correlation alone changes no mean).
  bool any() const { return warmup_fraction != 0 || wander_fraction != 0; }
};

class Drift {
 public:
  Drift() = default;  // no drift: the factor is 1
  // `seed` decides the wander's phases and amplitudes (one GPU's drift differs from another's).
  Drift(const DriftSpec& spec, std::uint64_t seed);

  // The multiplier at `t_s` seconds after the start (1 before it and without drift).
  double factor_at(double t_s) const;
  // Its integral from 0 to `t_s`: energy over [a, b] at a base power P is P * (integral(b) - integral(a)).
  double integral_s(double t_s) const;
  // The mean factor over [a, b] (the factor at a when b <= a).
  double mean_factor(double a_s, double b_s) const;
  bool any() const { return spec_.any(); }

 private:
  struct Sine {
    double amplitude = 0;
    double omega = 0;  // rad/s
    double phase = 0;
  };
  DriftSpec spec_;
  std::array<Sine, 3> wander_{};
};

}  // namespace wattwise::sim
