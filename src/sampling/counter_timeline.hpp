#pragma once

#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

// The energy counter seen as what it is: a value the device posts every ~100 ms. We poll much faster,
// so the read at which the value changed brackets the posting instant between two reads; a "knot" is
// that instant, estimated as the midpoint of the two reads (each read's own midpoint, as the value
// comes from somewhere inside the ~3 ms call). Between consecutive knots the counter's increment is
// exactly the energy spent, with a timing uncertainty of half the polling period. When the postings
// follow a regular grid (they do on an H100), the knots are moved onto the grid fitted to all brackets.
struct CounterPiece {
  Nanos begin{0};
  Nanos end{0};
  // The counter's increment over [begin, end]; absent when the counter went down (reset or wrap) there:
  // a new segment starts and the energy across the break is unknown to the counter.
  std::optional<double> energy_j;
};

struct CounterTimeline {
  std::vector<CounterPiece> pieces;  // contiguous and in time order; empty if the value never changed
  Nanos first_read{0};
  Nanos last_read{0};
  double known_energy_j = 0;  // sum of the known increments: last minus first value, across segments
  bool has_break = false;     // some piece has an unknown increment
  Nanos update_period{0};     // median time between knots (100 ms on an H100)
};

// The first piece starts one update period before the first knot: the first read's value was posted
// then, so the counter's total (last minus first value) is exactly the sum of the pieces.
CounterTimeline build_counter_timeline(const std::vector<CounterReading>& readings);

}  // namespace wattwise::sampling
