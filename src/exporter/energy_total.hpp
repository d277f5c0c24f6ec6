#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.hpp"
#include "sampling/posting_grid.hpp"
#include "sampling/trace.hpp"

namespace wattwise::exporter {

// How long the last power reading is held past its time to bring a total up to a scrape's instant. Power
// is read every --interval (100 ms by default); past a second the sampler has stalled or the GPU is gone,
// and a total must not keep growing on a guess.
inline constexpr Nanos kMaxPowerHold = std::chrono::seconds(1);

// A counter value read at t was posted by the device at the grid's latest posting at or before t, up to
// ~100 ms earlier. Stamping each read with that posting (the sampler's schedule learns the grid) lets the
// extension by power start where the counter's value really ends, instead of counting the stretch between
// posting and read twice or not at all: that stretch was worth up to 1% over a 15 s window.
void place_counter_reads_on_postings(std::vector<sampling::CounterReading>& readings,
                                     const sampling::PostingGrid& grid);

// The energy one GPU used since the exporter started, as a Prometheus counter must be: it never goes down.
//
// The truth is the driver's energy counter (shared/reference/nvml-h100.md): the total at a scrape is the
// counter's difference since its first read, summed over its increments, each at its posting instant
// where the grid is known (place_counter_reads_on_postings). The counter is read only every
// ~0.5 s (the sampler's phase-locked schedule), so between reads the total is extended by the power read
// since the last counter read: the 20 ms buffered samples as far as they reach, then the instantaneous
// power (read every --interval), then the last power held to the scrape's instant for at most kMaxPowerHold.
// The next counter read replaces that estimate; a total served earlier is never taken back (the counter
// stays flat until the truth passes it), so an overestimate is repaid, not reversed.
//
// A counter that goes down (the driver was reloaded, or the value wrapped) starts a new segment: the energy
// between the last read before the break and the first after it is integrated from the power readings in
// between (the last power held, without any), and the total goes on from there. It never goes backwards.
// A GPU without an energy counter is integrated from its power readings alone.
//
// Not thread-safe: the exporter calls add() on the sampling thread and joules_at() on the HTTP threads
// under one lock.
class EnergyTotal {
 public:
  // One harvest of readings (Sampler::take_traces), in the order they were taken.
  void add(const sampling::GpuTrace& readings);

  // Joules since the exporter started, at `now`; 0 before the first reading. Never less than a value it
  // returned before.
  double joules_at(Nanos now);

  // The error bar (+-) of joules_at(now), from what the total knows: the energy integrated from power readings
  // rather than counted (across counter breaks, a GPU without a counter: the samples' and instantaneous
  // power's relative bars of sampling/energy_accounting.hpp; power held past the readings: all of it), where
  // the latest counter value lies in time (one posting period at the latest power), and what a total served
  // earlier is above the present estimate. Call after joules_at(now). 0 before the first reading.
  double uncertainty_j_at(Nanos now) const;
  // The part of the bar that only grows: the energy estimated from power readings, folded into the total.
  double committed_uncertainty_j() const { return committed_bar_j_; }

  // The most recent power reading (samples or instantaneous), absent before the first.
  std::optional<double> last_power_w() const;
  // How many times the driver's counter went down.
  std::uint64_t counter_breaks() const { return counter_breaks_; }

 private:
  // Energy from committed_t_ to `until`, from the power readings since then, holding the last one for at
  // most `max_hold` past the readings.
  struct Extension {
    double joules = 0;
    double bar_j = 0;  // its error bar
  };
  Extension extension(Nanos until, Nanos max_hold) const;
  double extension_j(Nanos until, Nanos max_hold) const { return extension(until, max_hold).joules; }
  void commit(const Extension& e) {
    committed_j_ += e.joules;
    committed_bar_j_ += e.bar_j;
  }
  void on_counter(const sampling::CounterReading& reading);
  void on_power(std::vector<sampling::PowerReading>& buffer, const sampling::PowerReading& reading);
  void commit_power_until_last();

  bool started_ = false;
  bool has_counter_ = false;
  std::uint64_t last_counter_mj_ = 0;
  Nanos committed_t_{0};    // the instant committed_j_ describes (the last counter read)
  double committed_j_ = 0;  // counter increments (and power across breaks) up to committed_t_
  double committed_bar_j_ = 0;  // the error bar of committed_j_: the energy in it integrated from power
  std::vector<sampling::PowerReading> samples_after_;   // buffered samples after committed_t_
  std::vector<sampling::PowerReading> instants_after_;  // instantaneous power after committed_t_
  std::optional<sampling::PowerReading> last_power_;    // the latest power reading of any source
  double served_j_ = 0;
  std::uint64_t counter_breaks_ = 0;
};

}  // namespace wattwise::exporter
