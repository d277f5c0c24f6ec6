#pragma once

#include <cstddef>
#include <vector>

#include "core/clock.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

using namespace std::chrono_literals;

// Bounding the kept trace of long jobs. The 20 ms buffered samples are 50 a second per GPU (~70 MB per
// GPU-day); where the power is steady, or where no window will be cut, they say no more than one reading a
// second would. A buffered sample is the mean power over the interval since the one before
// (PowerInterpolation::kIntervalMean), so merging consecutive samples into one, stamped at the last and
// holding their time-weighted mean, keeps the integral between every kept stamp exact. Without window
// edges (CompactionRule below) only steady runs are merged: every sample of a group within
// kSteadyTolerance of the group's lowest, so any window cut from inside a group (a phase boundary there)
// is off by at most that fraction of its energy there; where the power moves (a training step's shape) the
// samples stay as they were.
inline constexpr double kSteadyTolerance = 0.01;
inline constexpr Nanos kCompactedSpan = 1s;  // a merged sample covers at most this much time
// Samples younger than this are never merged: the live side of `tune` and any phase still open read them.
inline constexpr Nanos kDefaultCompactAfter = 10min;
// Compaction runs once this much time has become old enough, so each pass moves the recent readings once.
inline constexpr Nanos kCompactionBatch = 1min;

// When the places where windows will be cut are known (a measurement's marker instants), the rest need no
// shape: there any run merges into groups of kCompactedSpan whatever the power does, which bounds a noisy
// load too (~1 sample a second instead of 50). Within kProtectedSpan of a marker instant nothing is merged
// and no group reaches across: the fine trace there is as it came, the offset search (+-150 ms) included,
// so a phase's edges read exactly what they read before. What is still approximate is the split of a
// counter interval (one a second) that holds a merged group, which scales the samples at the edges: within
// the group's swing over that part of the interval (docs/measure-json.md, "The kept trace").
inline constexpr Nanos kProtectedSpan = 250ms;

struct CompactionRule {
  // No window edges known: only steady runs merge (every sample within kSteadyTolerance of the lowest).
  bool steady_only = true;
  // With steady_only false: the instants, sorted, near which nothing merges.
  std::vector<Nanos> window_edges;
  // The longest a merged group (or the gap between two thinned point readings) may span.
  Nanos span = kCompactedSpan;
};

// A long job's trace older than what its open phases need, once the phases that ended there are accounted
// (measure/phase_folding.hpp): one reading a kCoarseSpan away from the open phases' begins (the samples
// merged, so the energy between kept stamps stays exact), every reading within kProtectedSpan of them, and
// the counter's reads one a kCoarseSpan (every read within kProtectedCounterSpan of those begins, and both
// reads around a decrease): the counter's difference over the job, and any window from an open phase's
// begin, read what they read before.
inline constexpr Nanos kCoarseSpan = 1min;
inline constexpr Nanos kProtectedCounterSpan = 3s;

// Merges runs among readings[from, to) (sorted by time) in place, as `rule` allows; readings from `to` on
// move down. readings[from - 1], when it exists, is the left edge of readings[from]'s interval; the first
// reading of the vector has none and is kept as it is. Returns where the old readings[to] is now.
std::size_t compact_samples(std::vector<PowerReading>& readings, std::size_t from, std::size_t to,
                            const CompactionRule& rule);
// The same for point readings (the instantaneous power, integrated by trapezoid), with window edges known
// (rule.steady_only false; else nothing changes): away from the edges one reading a kCompactedSpan is kept,
// near them every one. On a GPU with buffered samples no figure integrates this power; without them a
// window cut at an edge still reads every reading there, and a counter interval's split is as approximate
// as with merged samples. Returns where the old readings[to] is now.
// Telemetry (clocks, utilisation, temperature: a real GPU's change at nearly every reading) is thinned by
// the same rule: one reading a kCompactedSpan away from the edges, every one near them. Defined for
// PowerReading and TelemetryReading.
template <typename Reading>
std::size_t thin_point_readings(std::vector<Reading>& readings, std::size_t from, std::size_t to,
                                const CompactionRule& rule);
// The counter's reads among readings[from, to): one a rule.span (the first of the vector kept), every read
// within kProtectedCounterSpan of rule.window_edges, and both reads around a value that went down (a
// driver reload or a wrap starts a new segment). Returns where the old readings[to] is now.
std::size_t thin_counter_reads(std::vector<CounterReading>& readings, std::size_t from, std::size_t to,
                               const CompactionRule& rule);

}  // namespace wattwise::sampling
