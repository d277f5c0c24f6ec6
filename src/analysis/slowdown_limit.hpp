#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "analysis/time_curve.hpp"

namespace wattwise::analysis {

// "At most X% slower than the reference", judged the one way `analyze` (recommend) and the adaptive sweep
// both judge it. Each value's time is read off the time curve through its neighbours' runs (time_curve.hpp)
// where `use_curve` (one hardware knob, enough values) and the times allow it, else it is the value's mean.
// A value is within the limit when its judged time is at most (1 + max_slowdown) x the reference's, unless its
// own runs put it over the limit beyond their noise (the 95% slowdown interval from them and the reference's,
// the pooled spread standing in where a side ran once: slowdown_interval.hpp, wholly above the limit): there
// the curve does not follow the times, as across a sharp knee, which a quadratic rounds off (a pick +11.1%
// slower on runs 0.1% apart was judged +10.0% on the curve: docs/evidence/adaptive-sweep.md "The time curve
// reviewed"). The reference is always within.
struct SlowdownLimitJudgement {
  std::vector<double> time_s;  // each value's time as judged
  bool on_curve = false;       // time_s is the curve's, not the means
  std::vector<bool> within;
};

// `points` ascending in x, each with at least one run; `reference` indexes them.
SlowdownLimitJudgement judge_slowdown_limit(std::span<const TimeCurvePoint> points, std::size_t reference,
                                            double max_slowdown, bool use_curve);

}  // namespace wattwise::analysis
