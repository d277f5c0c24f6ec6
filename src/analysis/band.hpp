#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "analysis/aggregate.hpp"
#include "analysis/metrics.hpp"

namespace wattwise::analysis {

// A setting's metric as the band test sees it: the metric on the means (as the recommendation ranks it),
// oriented so that lower is better, and the standard error of the per-run metric values.
struct MetricEstimate {
  double score = 0;                      // metric on the means; negated where higher is better
  std::optional<double> standard_error;  // absent: no repeats here and none elsewhere to borrow from
  double df = 0;                         // degrees of freedom of standard_error
  bool borrowed = false;                 // single repeat: the standard error is the pooled one (below)
};

// The settings not distinguishable from the best for one metric.
struct Band {
  std::vector<std::size_t> members;  // indices into the settings, in setting order; always holds the best
  bool known = false;                // false: no setting has repeats, so the band is just the best (and ties)
};

// The band test (docs/analysis-json.md "band"): setting i is in the band of the best b when
//   score_i - score_b <= t_0.95(df) * s * sqrt(1/n_i + 1/n_b)
// a one-sided pooled-variance t test at 95%: the data do not show i worse than b. s is the standard deviation
// of one run's metric value pooled over every setting with repeats (the noise of one run of this job), df
// its pooled degrees of freedom, n the runs of each setting. With no repeats anywhere the band is unknown:
// it holds the best and the settings whose score equals it. Only settings flagged in `eligible` are
// considered.
std::vector<MetricEstimate> metric_estimates(const std::vector<SettingAggregate>& settings,
                                             const ReferencePoint& ref, const MetricSpec& metric);
Band indistinguishable_band(const std::vector<MetricEstimate>& estimates, std::size_t best,
                            const std::vector<bool>& eligible);

// How much worse than the best's a band member's metric may be and still be picked by the tie rule: the
// precision a recommendation promises (0.5%), so that a wide band (few repeats, noisy job) never hands the
// user a setting that is likely worse by more than that.
inline constexpr double kTieMargin = 0.005;

// The tie rule inside the band, one for every metric: among the band's members whose metric is within
// kTieMargin of the best's, the fastest (lowest mean time); equal times keep the earlier member (the best
// first when it is among them). There the metric cannot tell the settings apart, so the pick is the one
// that costs the job the least time (for `time` itself that is the best). Picking on the other axis instead
// (least energy for `time`) was tried and rejected: with two noisy repeats it recommended the slowest
// setting "for time".
std::size_t pick_in_band(const std::vector<SettingAggregate>& settings,
                         const std::vector<MetricEstimate>& estimates, const Band& band, std::size_t best);

}  // namespace wattwise::analysis
