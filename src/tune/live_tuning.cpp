#include "tune/live_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "sampling/sampler.hpp"
#include "store/durable_file.hpp"
#include "tune/live_report.hpp"
#include "workload/marker_receiver.hpp"

namespace wattwise::tune {
namespace {

double sample_std(double sum, double sum_sq, std::uint64_t n) {
  if (n < 2) return 0;
  const double mean = sum / static_cast<double>(n);
  const double var = (sum_sq - static_cast<double>(n) * mean * mean) / static_cast<double>(n - 1);
  return var > 0 ? std::sqrt(var) : 0;
}

}  // namespace

std::string no_markers_line(Nanos grace) {
  return fmt::format(
      "wattwise: no iteration markers in the job's first {:.0f} s, so nothing is tuned and the setting stays "
      "as it was; mark each training step, e.g. in Python `import wattwise` and `with "
      "wattwise.iteration(): train_step(batch)` (docs/markers.md)",
      to_seconds(grace));
}

LiveTuning::LiveTuning(LiveTuningOptions options)
    : options_(std::move(options)),
      tuner_(options_.tuner),
      in_force_(options_.captured_value.value_or(options_.tuner.start_value)),
      result_(tuning_result_for(options_.tuner)) {
  result_.captured_value = in_force_;
  result_.dry_run = options_.dry_run;
}

void LiveTuning::say(const std::string& line) const {
  if (options_.say) options_.say(line);
}

void LiveTuning::publish(const std::string& phase) const {
  if (options_.state_file.empty()) return;
  try {
    store::write_file_durably(options_.state_file, tuning_state_json(result(), phase).dump() + "\n");
  } catch (const std::exception& e) {
    // The job's view of the state is a convenience: the tuning goes on without it.
    say(fmt::format("wattwise: warning: cannot publish the tuning state: {}", e.what()));
  }
}

void LiveTuning::watch(const measure::LiveJob& job, const std::atomic<bool>& job_ended) {
  const sampling::LiveEnergy energy(job.sampler, job.job_gpus);
  const Resolver resolve = [&](const std::vector<sampling::EnergyWindow>& w) { return energy.resolve(w); };
  std::size_t markers_read = 0;
  Nanos next = job.clock.now();
  while (!job_ended.load()) {
    std::vector<workload::Marker> markers = job.receiver.markers_since(markers_read);
    markers_read += markers.size();
    try {
      step(job.clock, job.job_start, markers, resolve);
    } catch (const std::exception& e) {
      // The watcher must not throw (measure::JobWatcher): a failure stops the tuning, the job goes on,
      // and the caller's guard restores the captured setting at the end.
      result_.error = e.what();
      stopped_ = true;
      say(fmt::format("wattwise: tuning stopped: {}; the setting is restored when the job ends", e.what()));
      publish("stopped");
    }
    next += kPollPeriod;
    job.clock.sleep_until(std::max(next, job.clock.now()));
  }
}

void LiveTuning::step(Clock& clock, Nanos job_start, const std::vector<workload::Marker>& markers,
                      const Resolver& resolve) {
  if (!started_) {
    started_ = true;
    in_force_since_ = job_start;
    if (tuner_.current_value() != in_force_) {
      // The captured value is outside the range: the search starts from the range's nearest end.
      say(fmt::format("wattwise: tune: start: {} {} {} {}", options_.dry_run ? "would set" : "sets",
                      knob_flag(options_.tuner.knob), tuner_.current_value(),
                      knob_unit(options_.tuner.knob)));
      change_to(clock, job_start, tuner_.current_value());
    }
    publish(options_.dry_run ? "dry-run" : "searching");
  }
  for (const LiveIteration& iteration : assembler_.add(markers)) {
    ++result_.iterations_seen;
    if (!stopped_) pending_.push_back(iteration);
  }
  if (stopped_) return;
  if (!assembler_.heard_any()) {
    if (clock.now() - job_start >= options_.marker_grace) {
      result_.no_markers = true;
      stopped_ = true;
      say(no_markers_line(options_.marker_grace));
      publish("no-markers");
    }
    return;
  }
  while (!pending_.empty() && pending_.front().begin < in_force_since_) {
    pending_.pop_front();
    ++result_.iterations_discarded;
  }
  if (pending_.empty()) return;
  std::vector<sampling::EnergyWindow> windows;
  for (const auto& iteration : pending_) windows.push_back({iteration.begin, iteration.end});
  const std::vector<sampling::ResolvedEnergy> energies = resolve(windows);
  for (const sampling::ResolvedEnergy& energy : energies) {
    const LiveIteration iteration = pending_.front();
    pending_.pop_front();
    const double before = tuner_.current_value();
    feed(clock, job_start, iteration, energy);
    // A change makes the rest of the pending iterations stale (they began before it took effect).
    if (tuner_.current_value() != before || stopped_) break;
  }
}

void LiveTuning::feed(Clock& clock, Nanos job_start, const LiveIteration& iteration,
                      const sampling::ResolvedEnergy& energy) {
  Accumulator& acc = by_setting_[in_force_];
  ++acc.n;
  acc.time_sum += iteration.time_s;
  acc.time_sq += iteration.time_s * iteration.time_s;
  if (energy.joules) {
    ++acc.n_energy;
    acc.energy_sum += *energy.joules;
    acc.energy_sq += *energy.joules * *energy.joules;
  }
  ++result_.iterations_fed;
  const std::optional<Decision> decision = tuner_.observe({iteration.time_s, energy.joules});
  if (decision) act_on(clock, job_start, *decision);
}

void LiveTuning::act_on(Clock& clock, Nanos job_start, const Decision& decision) {
  const bool change = decision.value != in_force_;
  if (decision.kind == DecisionKind::kSettle && !result_.iterations_until_settled)
    result_.iterations_until_settled = result_.iterations_seen;
  say("wattwise: tune: " + decision_line(options_.tuner.knob, decision, options_.dry_run, change));
  if (change && !options_.dry_run) {
    if (!options_.apply) throw std::logic_error("live tuning without a way to apply a setting");
    options_.apply(decision.value);
    in_force_ = decision.value;
  }
  // In a dry run nothing changed, but the tuner now believes it holds the new value: the same iterations
  // are dropped as after a real change, so the counts are those a real run would have.
  if (change) {
    in_force_since_ = clock.now();
    result_.changes.push_back(
        {decision.value, to_seconds(in_force_since_ - job_start), result_.iterations_seen});
  }
  publish(options_.dry_run ? "dry-run" : (tuner_.settled() ? "settled" : "searching"));
}

void LiveTuning::change_to(Clock& clock, Nanos job_start, double value) {
  if (!options_.dry_run) {
    if (!options_.apply) throw std::logic_error("live tuning without a way to apply a setting");
    options_.apply(value);
    in_force_ = value;
  }
  // In a dry run nothing changed, but the tuner now believes it holds the new value: the same iterations
  // are dropped as after a real change, so the counts are those a real run would have.
  in_force_since_ = clock.now();
  result_.changes.push_back({value, to_seconds(in_force_since_ - job_start), result_.iterations_seen});
}

LiveTuningResult LiveTuning::result() const {
  LiveTuningResult r = result_;
  r.decisions = tuner_.decisions();
  r.settled = tuner_.settled_value();
  r.profiling_iterations = tuner_.profiling_iterations();
  r.stationary_wait_iterations = tuner_.stationary_wait_iterations();
  r.held_start = r.settled && tuner_.held_start();
  for (const auto& [value, acc] : by_setting_) {
    SettingSummary s;
    s.value = value;
    s.iterations = acc.n;
    s.with_energy = acc.n_energy;
    if (acc.n > 0) s.time_s_mean = acc.time_sum / static_cast<double>(acc.n);
    s.time_s_std = sample_std(acc.time_sum, acc.time_sq, acc.n);
    if (acc.n_energy > 0) s.energy_j_mean = acc.energy_sum / static_cast<double>(acc.n_energy);
    s.energy_j_std = sample_std(acc.energy_sum, acc.energy_sq, acc.n_energy);
    r.settings.push_back(s);
  }
  return r;
}

}  // namespace wattwise::tune
