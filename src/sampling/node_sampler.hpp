#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "hw/node_source.hpp"

namespace wattwise::sampling {

// Node sources (RAPL zones, a meter) are read on their own thread, apart from the GPU sampler: a meter
// command may take a second, and a powercap read costs microseconds, so a low rate loses nothing.
inline constexpr std::chrono::seconds kDefaultNodePeriod{1};
// A source that fails this many readings in a row is given up (a meter that hangs or prints garbage): it
// is not read again and its figures are absent. Fewer, and the next good reading spans the gap.
inline constexpr int kNodeFailuresBeforeGivingUp = 3;

struct NodeSample {
  Nanos t{0};                      // on the GPU traces' time line (core/clock.hpp)
  std::optional<double> energy_j;  // cumulative, unwrapped
  std::optional<double> power_w;
};

struct NodeTrace {
  std::string name;
  hw::NodeKind kind = hw::NodeKind::kMeter;
  std::string origin;
  std::vector<NodeSample> samples;
  std::uint64_t failed_readings = 0;
  std::string first_error;  // of the first failed reading; empty when none failed
  bool given_up = false;    // kNodeFailuresBeforeGivingUp failures in a row: not read after that
};

// Energy of one source over [t0, t1]: the cumulative energy (interpolated linearly between readings)
// differenced, or the power integrated by trapezoid. Absent when the readings do not cover the window or
// the source was given up.
std::optional<double> node_energy_j(const NodeTrace& trace, Nanos t0, Nanos t1);

class NodeSampler {
 public:
  NodeSampler(std::vector<std::unique_ptr<hw::NodeSource>> sources, Clock& clock,
              Nanos period = kDefaultNodePeriod);
  ~NodeSampler();
  NodeSampler(const NodeSampler&) = delete;
  NodeSampler& operator=(const NodeSampler&) = delete;

  bool empty() const { return sources_.empty(); }
  // The period in use: the one asked for, shortened where a counter could otherwise wrap twice unseen.
  Nanos period() const { return period_; }
  // Reads every source once, now (what the thread does each period).
  void read_all();
  // Reads once at once (so the job's start is covered), then every period on a thread of its own.
  void start();
  // Stops the thread (a meter command in flight is killed) and reads once more, so the end is covered.
  void stop();
  std::vector<NodeTrace> take_traces();

 private:
  void loop();
  std::vector<std::unique_ptr<hw::NodeSource>> sources_;
  std::vector<NodeTrace> traces_;
  std::vector<int> failures_in_a_row_;
  Clock& clock_;
  Nanos period_;
  std::mutex mutex_;  // guards stopping_; traces_ belong to the thread while it runs
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> cancelling_{
      false};  // stop() is cancelling the sources: a failed read is ours, not theirs
  std::thread thread_;
};

}  // namespace wattwise::sampling
