#pragma once

#include <cstddef>
#include <vector>

#include "core/clock.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

using namespace std::chrono_literals;

// Bounding the kept trace of long jobs. The 20 ms buffered samples are 50 a second per GPU (~70 MB per
// GPU-day); where the power is steady they say no more than one reading a second would. A buffered sample
// is the mean power over the interval since the one before (PowerInterpolation::kIntervalMean), so merging
// consecutive samples into one, stamped at the last and holding their time-weighted mean, keeps the
// integral between every kept stamp exact. Only steady runs are merged: every sample of a group within
// kSteadyTolerance of the group's lowest, so any window cut from inside a group (a phase boundary there)
// is off by at most that fraction of its energy there; where the power moves (a training step's shape) the
// samples stay as they were.
inline constexpr double kSteadyTolerance = 0.01;
inline constexpr Nanos kCompactedSpan = 1s;  // a merged sample covers at most this much time
// Samples younger than this are never merged: the live side of `tune` and any phase still open read them.
inline constexpr Nanos kDefaultCompactAfter = 10min;
// Compaction runs once this much time has become old enough, so each pass moves the recent readings once.
inline constexpr Nanos kCompactionBatch = 1min;

// Merges steady runs among readings[from, to) (sorted by time) in place; readings from `to` on move down.
// readings[from - 1], when it exists, is the left edge of readings[from]'s interval; the first reading of
// the vector has none and is kept as it is. Returns where the old readings[to] is now.
std::size_t compact_steady_samples(std::vector<PowerReading>& readings, std::size_t from, std::size_t to);

}  // namespace wattwise::sampling
