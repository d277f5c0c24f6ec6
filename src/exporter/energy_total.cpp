#include "exporter/energy_total.hpp"

#include <algorithm>

#include "sampling/energy_accounting.hpp"

namespace wattwise::exporter {
namespace {

// Energy of readings that each stand for the power of the stretch since the previous one (a buffered
// sample is the mean of the 20 ms before its stamp; the instantaneous field the ~100 ms before), from
// `from` up to `until` at most. Returns the joules and moves `from` to the last reading used.
double integrate(const std::vector<sampling::PowerReading>& readings, Nanos& from, Nanos until,
                 std::optional<double>& last_w) {
  double joules = 0;
  for (const sampling::PowerReading& reading : readings) {
    if (reading.t <= from) continue;
    if (reading.t > until) break;
    joules += reading.power_w * to_seconds(reading.t - from);
    from = reading.t;
    last_w = reading.power_w;
  }
  return joules;
}

}  // namespace

void place_counter_reads_on_postings(std::vector<sampling::CounterReading>& readings,
                                     const sampling::PostingGrid& grid) {
  for (sampling::CounterReading& reading : readings) reading.t = grid.at_or_before(reading.t);
}

EnergyTotal::Extension EnergyTotal::extension(Nanos until, Nanos max_hold) const {
  Nanos from = committed_t_;
  std::optional<double> last_w;
  if (last_power_ && last_power_->t <= committed_t_) last_w = last_power_->power_w;
  const double samples_j = integrate(samples_after_, from, until, last_w);
  const double instants_j = integrate(instants_after_, from, until, last_w);
  double held_j = 0;
  if (last_w && until > from) held_j = *last_w * to_seconds(std::min(until - from, max_hold));
  // A held power is a guess: the GPU may have drawn anything meanwhile, so all of it is the bar.
  return {samples_j + instants_j + held_j, sampling::kSamplesRelativeBar * samples_j +
                                               sampling::kInstantRelativeBar * instants_j + held_j};
}

void EnergyTotal::on_counter(const sampling::CounterReading& reading) {
  if (!started_ || !has_counter_) {
    // The first read is the baseline; a GPU that had been integrated from power switches to its counter.
    if (started_) commit(extension(reading.t, kMaxPowerHold));
    started_ = true;
    has_counter_ = true;
  } else if (reading.energy_mj >= last_counter_mj_) {
    committed_j_ += static_cast<double>(reading.energy_mj - last_counter_mj_) / 1000.0;
  } else {
    // The counter went down: its increment across the break is unknown, the power readings are not.
    ++counter_breaks_;
    commit(extension(reading.t, reading.t - committed_t_));
  }
  last_counter_mj_ = reading.energy_mj;
  committed_t_ = std::max(committed_t_, reading.t);
  std::erase_if(samples_after_, [&](const auto& r) { return r.t <= committed_t_; });
  std::erase_if(instants_after_, [&](const auto& r) { return r.t <= committed_t_; });
}

void EnergyTotal::on_power(std::vector<sampling::PowerReading>& buffer,
                           const sampling::PowerReading& reading) {
  if (!last_power_ || reading.t >= last_power_->t) last_power_ = reading;
  if (!started_) {
    if (has_counter_) return;
    // No counter (yet): the total starts at the first power reading.
    started_ = true;
    committed_t_ = reading.t;
    return;
  }
  if (reading.t <= committed_t_) return;  // drained late: the counter already covers it
  if (!buffer.empty() && reading.t <= buffer.back().t) return;
  buffer.push_back(reading);
}

void EnergyTotal::commit_power_until_last() {
  // Without a counter nothing ever replaces the integral: fold it in, so the buffers stay small.
  Nanos until = committed_t_;
  if (!samples_after_.empty()) until = std::max(until, samples_after_.back().t);
  if (!instants_after_.empty()) until = std::max(until, instants_after_.back().t);
  commit(extension(until, Nanos{0}));
  committed_t_ = until;
  samples_after_.clear();
  instants_after_.clear();
}

void EnergyTotal::add(const sampling::GpuTrace& readings) {
  // Counter reads and power readings in time order, so that a break is bridged by the power in between.
  const auto& instants = readings.power_instant.empty() ? readings.power_average : readings.power_instant;
  std::size_t c = 0, s = 0, i = 0;
  while (c < readings.energy.size() || s < readings.power_samples.size() || i < instants.size()) {
    const Nanos tc = c < readings.energy.size() ? readings.energy[c].t : Nanos::max();
    const Nanos ts = s < readings.power_samples.size() ? readings.power_samples[s].t : Nanos::max();
    const Nanos ti = i < instants.size() ? instants[i].t : Nanos::max();
    if (ts <= ti && ts < tc) {
      on_power(samples_after_, readings.power_samples[s++]);
    } else if (ti < tc) {
      on_power(instants_after_, instants[i++]);
    } else {
      on_counter(readings.energy[c++]);
    }
  }
  if (started_ && !has_counter_) commit_power_until_last();
}

double EnergyTotal::joules_at(Nanos now) {
  if (!started_) return 0;
  const double joules = committed_j_ + extension_j(std::max(now, committed_t_), kMaxPowerHold);
  served_j_ = std::max(served_j_, joules);
  return served_j_;
}

double EnergyTotal::uncertainty_j_at(Nanos now) const {
  if (!started_) return 0;
  const Extension e = extension(std::max(now, committed_t_), kMaxPowerHold);
  double bar = committed_bar_j_ + e.bar_j;
  // The latest counter value was posted up to a period before its read (less where the read was placed on
  // its posting): the power of that stretch may be counted on the wrong side of committed_t_.
  if (has_counter_ && last_power_) bar += last_power_->power_w * to_seconds(sampling::kAssumedPostingPeriod);
  // A total served earlier stays up until the counter passes it: it is above the estimate by that much.
  bar += std::max(0.0, served_j_ - (committed_j_ + e.joules));
  return bar;
}

std::optional<double> EnergyTotal::last_power_w() const {
  if (!last_power_) return std::nullopt;
  return last_power_->power_w;
}

}  // namespace wattwise::exporter
