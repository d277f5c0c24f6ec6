#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/profiles.hpp"

namespace wattwise::sim {

// One measured run of a replayed table, as the command read it (a runs CSV or a sweep database: sim knows
// neither format; experiment/replay_table.hpp reads both).
struct ReplayRun {
  std::map<std::string, double> setting;  // knob -> value
  double time_s = 0;
  double energy_j = 0;
  bool ok = true;  // a failed run is skipped
};

// Reads the table behind `--simulate csv:PATH`: the runs, or an error naming the file and what to do.
using ReplayTableReader = std::function<std::vector<ReplayRun>(const std::string& path)>;

// One measured power limit of a replayed table: the mean over its rows, and the spread when it has repeats.
struct ReplayPoint {
  double power_limit_w = 0;
  double time_s = 0;
  double energy_j = 0;
  int runs = 0;
  std::optional<double> time_cv;   // relative std of time over the repeats (>= 2 runs)
  std::optional<double> power_cv;  // relative std of energy / time over the repeats

  double power_w() const { return energy_j / time_s; }
};

// A job replayed from a table of measured runs: time and energy at any power limit between the lowest and
// the highest measured one, piecewise linear in the power limit between neighbouring measured limits (time
// and energy each; power is their ratio). Outside the measured range there is nothing to replay: refused.
class ReplayCurve {
 public:
  // The spread a table without repeats gets: 1% in time and 0.5% in power, like the V100 profiles.
  static constexpr double kDefaultTimeNoise = 0.01;
  static constexpr double kDefaultPowerNoise = 0.005;

  // `points` need distinct power limits (any order); at least one.
  ReplayCurve(std::vector<ReplayPoint> points, std::string source);

  struct Value {
    double time_s = 0;
    double energy_j = 0;
  };
  // usage_error outside [min_limit_w, max_limit_w].
  Value at(double power_limit_w) const;
  double min_limit_w() const { return points_.front().power_limit_w; }
  double max_limit_w() const { return points_.back().power_limit_w; }
  const std::vector<ReplayPoint>& points() const { return points_; }
  const std::string& source() const { return source_; }
  // Pooled over the limits that have repeats (root mean square of their CVs); the defaults without any.
  double time_noise_fraction() const;
  double power_noise_fraction() const;

 private:
  std::vector<ReplayPoint> points_;  // ascending power limit
  std::string source_;
};

// Groups runs by power limit (one row per run or per setting). Refuses (data_error) runs with any knob
// other than power_limit_w, or without it, naming the file and what to do.
ReplayCurve replay_curve_of(const std::vector<ReplayRun>& runs, const std::string& source);

// The simulated GPU and job that replay `curve`: the GPU's power limits span the measured range (default:
// the highest), its only SM clock is the boost clock (clock knobs are refused), and the job's speed and
// power follow the curve (docs/replay.md).
SimProfile replay_profile(std::shared_ptr<const ReplayCurve> curve);

}  // namespace wattwise::sim
