#include "sampling/node_sampler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/thread_name.hpp"
#include "sampling/periodic_schedule.hpp"

namespace wattwise::sampling {

namespace {

// The value of a piecewise-linear function through (t, v) at `t`, inside its range.
double interpolate(const std::vector<std::pair<Nanos, double>>& points, Nanos t) {
  auto after = std::lower_bound(points.begin(), points.end(), t,
                                [](const auto& point, Nanos x) { return point.first < x; });
  if (after == points.begin()) return after->second;
  if (after == points.end()) return points.back().second;
  const auto before = after - 1;
  const double span = to_seconds(after->first - before->first);
  if (span <= 0) return after->second;
  const double f = to_seconds(t - before->first) / span;
  return before->second + f * (after->second - before->second);
}

// The integral of the piecewise-linear function over [t0, t1] (trapezoids, the edges interpolated).
double integrate(const std::vector<std::pair<Nanos, double>>& points, Nanos t0, Nanos t1) {
  double sum = 0;
  Nanos last_t = t0;
  double last_v = interpolate(points, t0);
  for (const auto& [t, v] : points) {
    if (t <= t0) continue;
    if (t >= t1) break;
    sum += 0.5 * (last_v + v) * to_seconds(t - last_t);
    last_t = t;
    last_v = v;
  }
  sum += 0.5 * (last_v + interpolate(points, t1)) * to_seconds(t1 - last_t);
  return sum;
}

// A cumulative count lower than the last one kept (a meter reset, or a script that lost its state): the
// energy across it is unknown, and differenced it would be silently wrong (800 J then 100 J gave 763 J for a
// window over it). So it is a failed reading: a window it ends is absent, as is one over the drop while the
// source gives lower counts, until it is given up; the warning names it. "" for any other reading. Only a
// count is looked back for: a power-only source's samples carry none, and scanning them all on every
// reading would grow with the job.
std::string backwards_count_error(const NodeTrace& trace, const hw::NodeReading& reading) {
  if (!reading.energy_j) return "";
  const auto last_count =
      std::find_if(trace.samples.rbegin(), trace.samples.rend(), [](const NodeSample& s) { return s.energy_j; });
  if (last_count == trace.samples.rend() || *reading.energy_j >= *last_count->energy_j) return "";
  return fmt::format("its cumulative count went backwards ({:g} J, then {:g} J): a reset? A cumulative count "
                     "must only grow",
                     *last_count->energy_j, *reading.energy_j);
}

}  // namespace

std::optional<double> node_energy_j(const NodeTrace& trace, Nanos t0, Nanos t1) {
  if (trace.given_up || t1 < t0) return std::nullopt;
  std::vector<std::pair<Nanos, double>> energy, power;
  for (const auto& s : trace.samples) {
    if (s.energy_j) energy.emplace_back(s.t, *s.energy_j);
    if (s.power_w) power.emplace_back(s.t, *s.power_w);
  }
  const auto covers = [&](const auto& points) {
    return !points.empty() && points.front().first <= t0 && points.back().first >= t1;
  };
  if (covers(energy)) return interpolate(energy, t1) - interpolate(energy, t0);
  if (covers(power)) return integrate(power, t0, t1);
  return std::nullopt;
}

NodeSampler::NodeSampler(std::vector<std::unique_ptr<hw::NodeSource>> sources, Clock& clock, Nanos period)
    : sources_(std::move(sources)), failures_in_a_row_(sources_.size(), 0), clock_(clock), period_(period) {
  for (const auto& source : sources_) {
    NodeTrace trace;
    trace.name = source->name();
    trace.kind = source->kind();
    traces_.push_back(std::move(trace));
    // Half the wrap time: two reads always fall inside one pass of the counter, even with a late tick.
    const Nanos max_interval = source->max_read_interval();
    if (max_interval != Nanos::max()) period_ = std::min(period_, max_interval / 2);
  }
}

NodeSampler::~NodeSampler() {
  if (thread_.joinable()) stop();
}

void NodeSampler::read_all() {
  for (std::size_t i = 0; i < sources_.size(); ++i) {
    NodeTrace& trace = traces_[i];
    if (trace.given_up) continue;
    hw::NodeReading reading = sources_[i]->read();
    // Stamped when the read returns: a powercap read takes microseconds; a meter command's figure is as
    // late as the command itself, which no stamp could correct.
    const Nanos t = clock_.now();
    if (!reading.error.empty() && cancelling_) continue;
    if (reading.error.empty()) reading.error = backwards_count_error(trace, reading);
    if (!reading.error.empty()) {
      ++trace.failed_readings;
      if (trace.first_error.empty()) trace.first_error = reading.error;
      if (++failures_in_a_row_[i] >= kNodeFailuresBeforeGivingUp) trace.given_up = true;
      continue;
    }
    failures_in_a_row_[i] = 0;
    trace.samples.push_back({t, reading.energy_j, reading.power_w});
  }
}

void NodeSampler::start() {
  if (sources_.empty()) return;
  read_all();
  stopping_ = false;
  thread_ = named_thread("ww-node-power", [this] { loop(); });
}

void NodeSampler::loop() {
  PeriodicSchedule schedule(clock_.now(), period_);
  schedule.advance(clock_.now());
  std::unique_lock lock(mutex_);
  while (true) {
    const Nanos wait = schedule.next_due() - clock_.now();
    if (wake_.wait_for(lock, std::max(wait, Nanos{0}), [this] { return stopping_; })) return;
    lock.unlock();
    read_all();
    schedule.advance(clock_.now());
    lock.lock();
  }
}

void NodeSampler::stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cancelling_ = true;
  for (auto& source : sources_) source->set_cancelled(true);
  wake_.notify_all();
  thread_.join();
  for (auto& source : sources_) source->set_cancelled(false);
  cancelling_ = false;
  read_all();
}

std::vector<NodeTrace> NodeSampler::take_traces() {
  for (std::size_t i = 0; i < traces_.size(); ++i) traces_[i].origin = sources_[i]->origin();
  return std::move(traces_);
}

}  // namespace wattwise::sampling
