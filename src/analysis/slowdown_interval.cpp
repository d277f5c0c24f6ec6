#include "analysis/slowdown_interval.hpp"

#include <cmath>

namespace wattwise::analysis {
namespace {

// One side's variance of the log of its mean time, and the degrees of freedom it is known to.
struct Side {
  double variance = 0;
  double df = 0;
  bool pooled = false;
};

std::optional<Side> side(const Summary& s, const std::optional<PooledSpread>& pool) {
  if (s.n < 1 || !(s.mean > 0)) return std::nullopt;
  const bool has_spread = s.n >= 2 && s.stddev && std::isfinite(*s.stddev);
  // Two equal times say the spread is below the timer's grain, not that it is zero: the job's pooled spread
  // is the better guess, unless it is zero too (then the interval collapses, as it should for exact data).
  const bool own = has_spread && (*s.stddev > 0 || !pool || !(pool->relative_variance > 0));
  // A side with its own repeats keeps its own spread even where the pool has more degrees of freedom: a
  // setting noisier than the rest is judged on its own noise. Pooling every side held a pick three times as
  // noisy as the rest in 86.8% of sweeps, its own spread in 94.8%
  // (SlowdownInterval.ASideWithItsOwnRepeats...); on bench_adaptive_regret's replayed tables (seeds 101..120)
  // the exhaustive sweep's headline 76.7% against 91.7% (docs/evidence/adaptive-sweep.md).
  if (own) return Side{std::pow(*s.stddev / s.mean, 2) / s.n, static_cast<double>(s.n - 1), false};
  if (pool) return Side{pool->relative_variance / s.n, static_cast<double>(pool->df), true};
  return std::nullopt;
}

}  // namespace

std::optional<PooledSpread> pooled_time_spread(const std::vector<SettingAggregate>& settings) {
  std::vector<Summary> times;
  for (const SettingAggregate& s : settings) times.push_back(s.time_s);
  return pooled_time_spread(times);
}

std::optional<PooledSpread> pooled_time_spread(std::span<const Summary> times) {
  double squares = 0;
  int df = 0;
  for (const Summary& t : times) {
    if (t.n < 2 || !t.stddev || !std::isfinite(*t.stddev) || !(t.mean > 0)) continue;
    squares += (t.n - 1) * std::pow(*t.stddev / t.mean, 2);
    df += t.n - 1;
  }
  if (df == 0) return std::nullopt;
  return PooledSpread{squares / df, df};
}

std::optional<SlowdownInterval> slowdown_interval95(const Summary& time_s, const Summary& ref_time_s,
                                                    const std::optional<PooledSpread>& pool) {
  const std::optional<Side> a = side(time_s, pool), b = side(ref_time_s, pool);
  if (!a || !b) return std::nullopt;
  const double log_ratio = std::log(time_s.mean / ref_time_s.mean);
  const double variance = a->variance + b->variance;
  const bool pooled = a->pooled || b->pooled;
  if (!(variance > 0)) {
    const double point = 100 * std::expm1(log_ratio);
    return SlowdownInterval{{point, point}, pooled};
  }
  const double df =
      a->pooled && b->pooled
          ? a->df
          : variance * variance / (a->variance * a->variance / a->df + b->variance * b->variance / b->df);
  const double half = t_quantile_975(df) * std::sqrt(variance);
  return SlowdownInterval{{100 * std::expm1(log_ratio - half), 100 * std::expm1(log_ratio + half)}, pooled};
}

std::string to_string(SlowdownIntervalFrom from) {
  switch (from) {
    case SlowdownIntervalFrom::kRepeats:
      return "repeats";
    case SlowdownIntervalFrom::kPooledSpread:
      return "pooled spread";
    case SlowdownIntervalFrom::kNoRepeats:
      return "no repeats";
  }
  return "";  // not reached: every enumerator is named above
}

}  // namespace wattwise::analysis
