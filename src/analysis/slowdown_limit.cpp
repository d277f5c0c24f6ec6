#include "analysis/slowdown_limit.hpp"

#include "analysis/slowdown_interval.hpp"
#include "analysis/statistics.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {

SlowdownLimitJudgement judge_slowdown_limit(std::span<const TimeCurvePoint> points, std::size_t reference,
                                            double max_slowdown, bool use_curve) {
  if (reference >= points.size()) throw Error(ErrorKind::kInternal, "judge_slowdown_limit: no reference");
  SlowdownLimitJudgement j;
  std::vector<Summary> times;
  for (const TimeCurvePoint& p : points) {
    times.push_back(summarize(p.times_s));
    j.time_s.push_back(times.back().mean);
  }
  if (use_curve && times_fittable(points)) {
    j.time_s = smoothed_times(points);
    j.on_curve = true;
  }
  const auto pool = pooled_time_spread(times);
  const double limit_s = (1 + max_slowdown) * j.time_s[reference];
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool within = i == reference || j.time_s[i] <= limit_s;
    if (within && j.on_curve && i != reference) {
      const auto own = slowdown_interval95(times[i], times[reference], pool);
      if (own && own->pct.first > 100 * max_slowdown) within = false;
    }
    j.within.push_back(within);
  }
  return j;
}

}  // namespace wattwise::analysis
