#include "sim/drift.hpp"

#include <cmath>

#include "sim/noise.hpp"

namespace wattwise::sim {
namespace {

constexpr double kTwoPi = 2 * 3.14159265358979323846;
// The wander's periods (s), each stretched or shrunk by up to 30% per seed: minutes, not seconds.
constexpr std::array<double, 3> kWanderPeriodsS = {180, 420, 780};

}  // namespace

Drift::Drift(const DriftSpec& spec, std::uint64_t seed) : spec_(spec) {
  Noise noise(seed ^ 0xd71f7ULL);
  std::array<double, 3> weights{};
  double total = 0;
  for (double& w : weights) total += (w = 0.5 + 0.5 * noise.uniform());
  for (std::size_t i = 0; i < wander_.size(); ++i) {
    // The amplitudes add up to half the fraction: the sum stays within +-wander_fraction / 2.
    wander_[i].amplitude = spec_.wander_fraction / 2 * weights[i] / total;
    wander_[i].omega = kTwoPi / (kWanderPeriodsS[i] * (0.7 + 0.6 * noise.uniform()));
    wander_[i].phase = kTwoPi * noise.uniform();
  }
}

double Drift::factor_at(double t_s) const {
  if (!any() || t_s <= 0) return 1;
  double f = 1 - spec_.warmup_fraction * std::exp(-t_s / spec_.warmup_tau_s);
  for (const Sine& s : wander_) f += s.amplitude * (std::sin(s.omega * t_s + s.phase) - std::sin(s.phase));
  return f;
}

double Drift::integral_s(double t_s) const {
  if (!any() || t_s <= 0) return t_s;
  const double tau = spec_.warmup_tau_s;
  double v = t_s - spec_.warmup_fraction * tau * (1 - std::exp(-t_s / tau));
  for (const Sine& s : wander_)
    v += s.amplitude *
         ((std::cos(s.phase) - std::cos(s.omega * t_s + s.phase)) / s.omega - std::sin(s.phase) * t_s);
  return v;
}

double Drift::mean_factor(double a_s, double b_s) const {
  if (b_s <= a_s) return factor_at(a_s);
  return (integral_s(b_s) - integral_s(a_s)) / (b_s - a_s);
}

}  // namespace wattwise::sim
