#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/fit.hpp"

namespace wattwise::analysis {

// The decision model of a numeric knob (docs/analysis-json.md "Decision"): one metric's per-run values
// across the knob's values, fitted by a local quadratic around the lowest mean; the recommendation is the
// fastest measured value whose fitted metric is within kFitTieMargin of the optimum, the fitted curve moved
// sideways to the median of the resampled fits' optima (bagging: see fit_curve). Used by
// `analyze` (and so `sweep`, `report`) and by the adaptive sweep's steering, so that both decide alike.

// One measured value of the knob: its per-run metric values (oriented: lower is better) and mean time.
struct CurvePoint {
  double x = 0;
  std::vector<double> values;  // one per run: the repeats weigh in as runs
  double mean_time_s = 0;
  bool eligible = true;  // may be picked (--max-slowdown); the fit uses every point
  double mean() const;
};

// The fit's window, as a fraction of the measured range either side of the lowest mean: 0.2 (30 W of a
// 150..300 W sweep, six 5 W steps) was chosen for the adaptive sweep on bench/adaptive_regret's seeds
// 101..120; values whose mean is more than kFitMaxExcess above the lowest are left out of it (a steep side
// is no parabola and drags the vertex away). docs/evidence/adaptive-sweep.md.
inline constexpr double kFitHalfWidthFraction = 0.2;
inline constexpr double kFitMaxExcess = 0.10;
// How much worse than the fitted optimum the fitted metric of the pick may be (relative): chosen on
// bench/adaptive_regret's seeds 101..120 (0, 0.01%, 0.02%, 0.05%, 0.1%, 0.2% tried; docs/evidence/
// adaptive-sweep.md). The fit's own error adds to it, so it is far below the 0.5% a recommendation
// promises: at 0.1% the pick was within 0.5% of the optimum less often (96.2% against 97.9%).
inline constexpr double kFitTieMargin = 0.0001;
// The interval of the optimum: a lack-of-fit F-test at this level (the spread of the window's means around
// the quadratic against the spread between repeats) decides whether the quadratic may be missing a kink;
// where it does, the resampled lowest means join the interval. 0.90 was chosen on bench/adaptive_regret's
// seeds 101..120 (0.5, 0.75, 0.90, 0.95 tried; docs/evidence/adaptive-sweep.md).
inline constexpr double kLackOfFitLevel = 0.90;
// Fewer distinct values than this and the recommendation falls back to the per-setting means: the window
// needs three values and neighbours beyond them (a table of five published optima is no curve).
inline constexpr std::size_t kMinFitValues = 6;
// The local cubic (where the quadratic misfits) needs this many distinct values in its window: with four it
// runs through the four means, and the lack-of-fit test behind it had one degree of freedom.
inline constexpr std::size_t kMinCubicValues = 5;
// Sums of squares below (kRoundingResidue x the metric)^2 per run are rounding, not spread: repeats that
// agree exactly (noise-free replays) leave residue of about 1e-13 of the metric around any fit.
inline constexpr double kRoundingResidue = 1e-9;

struct CurveFit {
  QuadraticFit quadratic;      // over [window_low, window_high], in the points' orientation
  std::size_t first = 0;       // the window: points[first..last]
  std::size_t last = 0;
  double optimum_x = 0;        // the fitted optimum over the eligible part of the window (continuous)
  double optimum_y = 0;        // the fitted metric there (oriented)
  double optimum_median = 0;   // the median of the resampled fits' optima (optimum_x without resamples)
  std::size_t pick = 0;        // into points: the fastest eligible window point within the margin of the
                               // fit moved sideways to optimum_median
  double optimum_low = 0;      // 90% interval of the optimum (bootstrap over runs, the window refitted;
                               // widened by lack of fit: see fit_curve), always holding optimum_x and
                               // optimum_median
  double optimum_high = 0;
  std::optional<std::string> edge;  // "below" / "above": the fitted optimum is at that end of the range
  bool lack_of_fit = false;  // the lack-of-fit test rejected the quadratic (kLackOfFitLevel; only with
                             // resamples)
  bool median_of_cubics = false;  // optimum_median is the resampled cubics': lack_of_fit, the window has
                                  // kMinCubicValues values and most resamples fitted a cubic (fit_curve)
};

// Fits `points` (ascending x, distinct, at least three, at least one eligible). `bootstrap` = 0 skips the
// resamples: no interval (optimum_low = optimum_high = optimum_x) and the pick from the one fit.
// `half_width_fraction`: the window's half-width as a fraction of the measured range (kFitHalfWidthFraction,
// the sweeps'; the online tuner, whose candidates are each far noisier than a sweep's runs, pools a wider
// window: tune::kTunerFitHalfWidthFraction).
// The pick: the fitted quadratic moved sideways so that its optimum is the median of the resampled fits'
// optima, then the fastest eligible window point within kFitTieMargin of the optimum on it. The window is
// chosen around the lowest mean, which one lucky run moves; the median over resamples that choose their
// window again averages that choice out (on a replayed table's kink, the parabola's vertex moves with it).
// Where the lack-of-fit test rejects the quadratic (kLackOfFitLevel), each resample also fits a cubic over
// its window (kMinCubicValues distinct values or more) and, where the window has that many values and most
// resamples fitted a cubic, the median is of the cubics' optima (median_of_cubics): a quadratic is
// symmetric about its vertex, so a lopsided optimum (steep on one side, gentle on the other) drags it
// towards the gentle side, where a cubic follows the asymmetry (the quadratic still gives the window and
// the tie margin). Otherwise the median stays the quadratics'. Where repeats agree exactly (a noise-free
// replay) the test rejects any misfit beyond rounding residue (kRoundingResidue): every curve that is not a
// parabola.
// The interval: `bootstrap` resamples, each drawing every point's runs again around its mean from the
// spread between repeats pooled over all points (the window's residuals where nothing is repeated), plus a
// random shift per point of the size of the lack of fit beyond that spread; each resample chooses its
// window again and refits. Its 5th..95th percentile of the optimum, joined, where the lack-of-fit test
// rejects the quadratic (kLackOfFitLevel), with the 5th..95th percentiles of where the resampled means are
// lowest (a kink between straight pieces, a replayed table, is there, not where a parabola through it
// bottoms out) and, with median_of_cubics, of the resampled cubics' optima (so that the interval holds
// the median the pick is nearest).
CurveFit fit_curve(std::span<const CurvePoint> points, std::size_t bootstrap = 200,
                   double half_width_fraction = kFitHalfWidthFraction);

}  // namespace wattwise::analysis
