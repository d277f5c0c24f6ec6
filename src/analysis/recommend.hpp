#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/aggregate.hpp"
#include "analysis/metrics.hpp"
#include "analysis/slowdown_interval.hpp"

namespace wattwise::analysis {

// A setting not distinguishable from the best (band.hpp states the test).
struct BandMember {
  std::size_t setting_index = 0;
  Setting setting;
  double metric_value = 0;                      // on the means, normalised to the reference
  std::optional<double> metric_standard_error;  // of the mean; absent: unknown (no repeats anywhere)
  bool borrowed_error = false;                  // measured once: the pooled standard error is used
};

// How a recommendation was made (docs/analysis-json.md "Decision"): from the fitted curve of a numeric
// knob (curve_model.hpp), or from the per-setting means and the band where nothing can be fitted.
struct Decision {
  std::string method = "means";  // "fit" or "means"
  std::string reason;            // with "means": why no fit ("batch is a knob of the job: categorical")
  std::string knob;              // with "fit": the knob fitted across
  double optimum_value = 0;      // the fitted optimum (knob units, continuous)
  double optimum_median = 0;     // the median of the resampled fits' optima: the pick is nearest it
  double optimum_low = 0;        // its 90% interval (bootstrap over runs: curve_model.hpp fit_curve)
  double optimum_high = 0;
  double optimum_metric = 0;  // the fitted metric there, normalised to the reference
  double window_low = 0;      // the knob values the local fit used
  double window_high = 0;
  std::optional<std::string> edge;  // "below" / "above": the optimum may lie beyond what was measured
  bool lack_of_fit = false;         // the lack-of-fit test rejected the quadratic
  bool median_of_cubics = false;    // optimum_median is of resampled local cubics (else of the quadratics)
  std::string text() const;         // one phrase for people: how the pick was made, and the edge
  std::string edge_text() const;    // "the optimum may lie below 150 W: extend the range", or empty
};

struct Recommendation {
  MetricSpec metric;
  std::size_t setting_index = 0;  // the pick: into the aggregates it was chosen from
  Setting setting;
  double metric_value = 0;          // on the means, normalised to the reference
  double energy_j = 0;              // mean
  double time_s = 0;                // mean
  double energy_vs_ref_pct = 0;     // 100 * (E / E_ref - 1): negative = saves energy
  double time_vs_ref_pct = 0;       // 100 * (t / t_ref - 1): positive = slower
  // With a slowdown limit over a fitted knob: the slowdown on the time curve (time_curve.hpp), the pick's
  // fitted time against the reference's, by which "at most X% slower" was judged; absent where it was
  // judged on the means.
  std::optional<double> time_vs_ref_curve_pct;
  // The 95% interval of time_vs_ref_pct (slowdown_interval95): from both settings' own repeats, or where a
  // side has one run, from the time spread pooled over the settings with repeats. Absent for the reference
  // itself, and where no setting has two runs.
  std::optional<std::pair<double, double>> time_vs_ref_ci95_pct;
  // How that interval was made (both sides' own repeats, the pooled spread for a side, or none for want of
  // repeats); absent for the reference itself.
  std::optional<SlowdownIntervalFrom> time_vs_ref_ci95_from;
  std::optional<bool> significant;  // absent: no repeats, unknown
  std::string note;
  std::size_t best_index = 0;  // the lowest metric on the means (highest for gain-loss)
  double best_metric_value = 0;
  std::vector<BandMember> band;  // settings not distinguishable from the best, the best among them
  bool band_known = false;       // false: no repeats anywhere, the band is the best (and exact ties)
  std::string tie_rule;          // "fastest within 0.5%": how the pick was made inside the band
  Decision decision;             // how setting_index was chosen: the fit, or the means and the band
};

// Chooses the best setting for `metric` (the lowest mean), its band (band.hpp) and the pick. Where one
// hardware knob varies over at least kMinFitValues values, the pick comes from the decision model
// (curve_model.hpp: the fastest setting whose fitted metric is within kFitTieMargin of the fitted
// optimum); otherwise from the band by the tie rule (pick_in_band: the fastest within 0.5% of the best),
// and decision.reason says why. setting_index, setting and the figures are the pick's. With `max_slowdown`
// (0.10 = 10%) only settings with t <= (1 + max_slowdown) * t_ref qualify, t read off the time curve where
// the decision model fits (time_curve.hpp), else each setting's mean; the reference always qualifies, so
// there is always an answer.
// Ties: the lowest metric wins (highest for gain-loss); values equal within 1e-12 relative are a tie, broken
// in favour of the setting closer to the reference (sum over knobs of |v - v_ref| / |v_ref|), then the
// earlier setting in setting order. Only exact ties are broken this way: near-ties such as the published
// resnet50 EDS(2.0) and EDP rows (0.01% apart) keep the strictly lower value, so results are reproducible.
// Significance: Welch's t-test at 95% on the per-run metric values of the pick against the reference's; with
// a single repeat on either side it is unknown and the note says so.
Recommendation recommend(const std::vector<SettingAggregate>& settings, std::size_t reference_index,
                         const MetricSpec& metric, std::optional<double> max_slowdown = std::nullopt);

// Whether `r`, recommended within `max_slowdown`, qualified on the time curve (time_vs_ref_curve_pct within
// the limit) while its own runs' mean is over the limit: where it is printed under "at most X% slower", its
// curve figure is said beside its mean's.
bool within_on_the_curve_only(const Recommendation& r, std::optional<double> max_slowdown);

}  // namespace wattwise::analysis
