#pragma once

#include <random>
#include <utility>

namespace wattwise::plan {

template <typename T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  // Fisher-Yates with our own bounded draw (rejection sampling): std::uniform_int_distribution's
  // algorithm differs between standard libraries, which would change the order between platforms.
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::uint64_t bound = i;
    const std::uint64_t limit = std::mt19937_64::max() - (std::mt19937_64::max() % bound + 1) % bound;
    std::uint64_t draw = engine();
    while (draw > limit) draw = engine();
    std::swap(items[i - 1], items[static_cast<std::size_t>(draw % bound)]);
  }
}

}  // namespace wattwise::plan
