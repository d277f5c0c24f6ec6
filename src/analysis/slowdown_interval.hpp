#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/aggregate.hpp"
#include "analysis/statistics.hpp"

namespace wattwise::analysis {

// One run's spread of time relative to its setting's mean, pooled over every setting with repeats: the
// squared coefficients of variation weighted by their degrees of freedom (the error mean square of a one-way
// analysis of variance on time / setting mean). Run-to-run noise is multiplicative (about 1% of the time
// whatever the setting), so relative spreads of settings 40% apart in time are one quantity; the relative
// form is the delta method's term for the log of a mean, the same the interval uses for a side's own spread,
// and within 1e-4 of the pooled variance of log(time) at such noise.
struct PooledSpread {
  double relative_variance = 0;  // of one run's time over its setting's mean
  int df = 0;                    // sum over the settings with repeats of (n - 1)
};

// Absent when no setting has two runs (or none with a positive mean time).
std::optional<PooledSpread> pooled_time_spread(const std::vector<SettingAggregate>& settings);
// The same over each setting's time summary.
std::optional<PooledSpread> pooled_time_spread(std::span<const Summary> times);

struct SlowdownInterval {
  std::pair<double, double> pct;  // [low, high] of 100 * (t / t_ref - 1)
  bool pooled = false;            // at least one side's spread is the pool's, not its own repeats'
};

// The 95% interval of 100 * (t / t_ref - 1): the log of the ratio of the two mean times +- Student's t times
// its standard error. Each side's variance of its mean is its own (s / mean)^2 / n where it has two runs and
// a spread; where it has one run, or a zero spread while the pool's is not, the pool's relative variance / n.
// Degrees of freedom: Welch's (Satterthwaite's), a pooled side counting the pool's; both sides pooled share
// one estimate, so the pool's alone. Absent where a side has neither its own spread nor a pool.
std::optional<SlowdownInterval> slowdown_interval95(const Summary& time_s, const Summary& ref_time_s,
                                                    const std::optional<PooledSpread>& pool);

// How a recommendation's slowdown interval was made (Recommendation::time_vs_ref_ci95_from).
enum class SlowdownIntervalFrom {
  kRepeats,       // both sides' own repeats
  kPooledSpread,  // at least one side's spread is the pool's (it ran once, or its runs agreed exactly)
  kNoRepeats,     // no setting has two runs: there is no interval
};

// "repeats", "pooled spread" or "no repeats", as the JSON spells them (docs/analysis-json.md).
std::string to_string(SlowdownIntervalFrom from);

}  // namespace wattwise::analysis
