#pragma once

#include <cmath>
#include <cstdint>

namespace wattwise::sim {

// Seeded normal noise that gives the same numbers with every compiler and standard library (std::normal_
// distribution does not promise that): splitmix64 feeding Box-Muller.
class Noise {
 public:
  explicit Noise(std::uint64_t seed) : state_(seed) {}

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  double normal() {
    const double u1 = (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
    const double u2 = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

}  // namespace wattwise::sim
