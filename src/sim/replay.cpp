#include "sim/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace wattwise::sim {
namespace {

constexpr const char* kKnob = "power_limit_w";
// Limits closer than this are the same limit (a table's 150 and a computed 150.0000001).
constexpr double kSameLimitW = 1e-6;

// Relative standard deviation of `values` (n - 1 in the denominator); nullopt below two values.
std::optional<double> relative_std(const std::vector<double>& values) {
  if (values.size() < 2) return std::nullopt;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return std::sqrt(ss / static_cast<double>(values.size() - 1)) / mean;
}

double pooled(const std::vector<ReplayPoint>& points, std::optional<double> ReplayPoint::*cv,
              double fallback) {
  double sum_sq = 0;
  int count = 0;
  for (const auto& p : points) {
    if (!(p.*cv)) continue;
    sum_sq += *(p.*cv) * *(p.*cv);
    ++count;
  }
  return count == 0 ? fallback : std::sqrt(sum_sq / count);
}

}  // namespace

ReplayCurve::ReplayCurve(std::vector<ReplayPoint> points, std::string source)
    : points_(std::move(points)), source_(std::move(source)) {
  if (points_.empty()) throw data_error(fmt::format("{}: no successful run to replay", source_));
  std::sort(points_.begin(), points_.end(),
            [](const ReplayPoint& a, const ReplayPoint& b) { return a.power_limit_w < b.power_limit_w; });
  for (std::size_t i = 1; i < points_.size(); ++i) {
    if (points_[i].power_limit_w - points_[i - 1].power_limit_w < kSameLimitW)
      throw data_error(fmt::format("{}: power limit {} W appears twice after grouping", source_,
                                   points_[i].power_limit_w));
  }
}

ReplayCurve::Value ReplayCurve::at(double power_limit_w) const {
  if (power_limit_w < min_limit_w() - kSameLimitW || power_limit_w > max_limit_w() + kSameLimitW) {
    throw usage_error(fmt::format(
        "power limit {} W is outside the replayed table {} ({}-{} W): there is nothing to interpolate "
        "from; choose limits within the measured range",
        power_limit_w, source_, min_limit_w(), max_limit_w()));
  }
  const auto upper = std::lower_bound(points_.begin(), points_.end(), power_limit_w - kSameLimitW,
                                      [](const ReplayPoint& p, double w) { return p.power_limit_w < w; });
  if (upper == points_.begin() || std::abs(upper->power_limit_w - power_limit_w) <= kSameLimitW)
    return {upper->time_s, upper->energy_j};
  const auto lower = std::prev(upper);
  const double f = (power_limit_w - lower->power_limit_w) / (upper->power_limit_w - lower->power_limit_w);
  return {lower->time_s + f * (upper->time_s - lower->time_s),
          lower->energy_j + f * (upper->energy_j - lower->energy_j)};
}

double ReplayCurve::time_noise_fraction() const {
  return pooled(points_, &ReplayPoint::time_cv, kDefaultTimeNoise);
}

double ReplayCurve::power_noise_fraction() const {
  return pooled(points_, &ReplayPoint::power_cv, kDefaultPowerNoise);
}

ReplayCurve replay_curve_of(const std::vector<ReplayRun>& runs, const std::string& source) {
  struct Group {
    std::vector<double> times, energies, powers;
  };
  std::map<double, Group> groups;
  for (const auto& run : runs) {
    if (!run.ok) continue;
    for (const auto& [knob, value] : run.setting) {
      if (knob != kKnob) {
        throw data_error(fmt::format(
            "{}: column '{}' is a knob a replayed profile cannot vary: replay supports power_limit_w only; "
            "keep the rows of one {} value and drop the column",
            source, knob, knob));
      }
    }
    const auto limit = run.setting.find(kKnob);
    if (limit == run.setting.end())
      throw data_error(fmt::format("{}: no power_limit_w column: a replayed profile needs one", source));
    Group& g = groups[limit->second];
    g.times.push_back(run.time_s);
    g.energies.push_back(run.energy_j);
    g.powers.push_back(run.energy_j / run.time_s);
  }
  std::vector<ReplayPoint> points;
  for (const auto& [limit, g] : groups) {
    ReplayPoint p;
    p.power_limit_w = limit;
    p.runs = static_cast<int>(g.times.size());
    for (std::size_t i = 0; i < g.times.size(); ++i) {
      p.time_s += g.times[i] / static_cast<double>(p.runs);
      p.energy_j += g.energies[i] / static_cast<double>(p.runs);
    }
    p.time_cv = relative_std(g.times);
    p.power_cv = relative_std(g.powers);
    points.push_back(p);
  }
  return ReplayCurve(std::move(points), source);
}

SimProfile replay_profile(std::shared_ptr<const ReplayCurve> curve) {
  SimProfile profile;
  // The board: a V100's thermal and idle behaviour (the table says nothing about them), the measured range
  // of limits, and one SM clock so that --sm-clock is refused as unsupported rather than silently ignored.
  profile.gpu = find_gpu_spec("v100");
  profile.gpu.key = "csv";
  profile.gpu.name = fmt::format("replayed {} (simulated)", curve->source());
  profile.gpu.min_limit_w = curve->min_limit_w();
  profile.gpu.max_limit_w = curve->max_limit_w();
  profile.gpu.default_limit_w = curve->max_limit_w();
  profile.gpu.overshoot_fraction = 0;
  profile.gpu.sm_clocks_mhz = {profile.gpu.boost_sm_clock_mhz};
  profile.gpu.mem_clocks_mhz = {profile.gpu.mem_clocks_mhz.front()};

  const ReplayCurve::Value top = curve->at(curve->max_limit_w());
  WorkloadProfile& w = profile.workload;
  w.model = "replay";
  w.default_batch = 128;
  w.default_samples_per_epoch = 100000;
  // Speed 1 and the noise's power scale are the values at the highest limit; the curve does the rest.
  w.samples_per_s = static_cast<double>(w.default_samples_per_epoch) / top.time_s;
  w.busy_power_w = top.energy_j / top.time_s;
  w.static_power_w = w.busy_power_w;
  w.mem_used_mib = 8000;
  w.util_mem_pct = 40;
  w.replay = std::move(curve);
  return profile;
}

}  // namespace wattwise::sim
