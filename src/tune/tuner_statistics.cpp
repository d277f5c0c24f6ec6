// The statistics behind the tuner's comparisons in time: the start value's level at a candidate's time, and
// whether a window of iterations trends.

#include <algorithm>
#include <cmath>

#include "analysis/statistics.hpp"
#include "tune/tuner_state.hpp"

namespace wattwise::tune::tuner_detail {

std::optional<StartLevel> start_level(const std::vector<StartMeasurement>& ms, double at_s,
                                      double bandwidth_s) {
  if (ms.empty()) return std::nullopt;
  std::vector<double> w(ms.size());
  double sw = 0, st = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double z = (ms[i].at_s - at_s) / bandwidth_s;
    w[i] = ms[i].iterations * std::exp(-0.5 * z * z);
    sw += w[i];
    st += w[i] * ms[i].at_s;
  }
  if (!(sw > 0)) return std::nullopt;
  const double mean_t = st / sw;
  double stt = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) stt += w[i] * (ms[i].at_s - mean_t) * (ms[i].at_s - mean_t);
  // A line needs two measurements apart in time; with one (or all at once) the level is their mean.
  const bool line = ms.size() >= 2 && stt > 1e-9 * sw;
  StartLevel level;
  double variance = 0;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    const double c = w[i] * (1 / sw + (line ? (at_s - mean_t) * (ms[i].at_s - mean_t) / stt : 0));
    level.ref.energy_j += c * ms[i].energy_j;
    level.ref.time_s += c * ms[i].time_s;
    variance += c * c / ms[i].iterations;
  }
  level.iterations = variance > 0 ? 1 / variance : 0;
  if (!(level.ref.energy_j > 0) || !(level.ref.time_s > 0)) return std::nullopt;
  return level;
}

Trend trend(const std::vector<double>& t, const std::vector<double>& v) {
  const std::size_t n = t.size();
  double mt = 0, mv = 0;
  for (std::size_t i = 0; i < n; ++i) mt += t[i], mv += v[i];
  mt /= static_cast<double>(n), mv /= static_cast<double>(n);
  double stt = 0, stv = 0;
  for (std::size_t i = 0; i < n; ++i) stt += (t[i] - mt) * (t[i] - mt), stv += (t[i] - mt) * (v[i] - mv);
  if (!(stt > 0) || !(mv > 0)) return {};
  const double slope = stv / stt;
  double ss = 0, lag = 0, previous = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double r = v[i] - mv - slope * (t[i] - mt);
    ss += r * r;
    if (i > 0) lag += r * previous;
    previous = r;
  }
  const double df = static_cast<double>(n) - 2;
  const double rho = ss > 0 ? std::clamp(lag / ss, 0.0, 0.9) : 0;
  const double se = std::sqrt(ss / df / stt) * std::sqrt((1 + rho) / (1 - rho));
  Trend tr;
  tr.change = slope * (t.back() - t.front()) / mv;
  tr.significant = se > 0 ? std::abs(slope) / se > analysis::t_quantile_975(df) : slope != 0;
  return tr;
}

std::optional<Line> fit_line(const std::vector<double>& x, const std::vector<double>& y,
                             const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sw += w[i], sx += w[i] * x[i], sy += w[i] * y[i];
  if (!(sw > 0)) return std::nullopt;
  Line line;
  line.mean_x = sx / sw;
  line.a = sy / sw;
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += w[i] * (x[i] - line.mean_x) * (x[i] - line.mean_x);
    sxy += w[i] * (x[i] - line.mean_x) * (y[i] - line.a);
  }
  if (!(sxx > 1e-12 * sw)) return std::nullopt;
  line.b = sxy / sxx;
  return line;
}

}  // namespace wattwise::tune::tuner_detail
