#pragma once

// The headline's regret, for bench_adaptive_regret: what the sweep's closing line and the report's box
// recommend by default (docs/analysis-json.md "headline": the lowest energy at most 10% slower than the
// reference) judged on the noise-free curve. The truth is the noise-free curve's lowest energy among the
// limits whose noise-free time is at most 1.10 x the reference's; the pick is judged on its energy against
// the truth's and on its own noise-free slowdown, since the analysis decides "at most 10% slower" on noisy
// means and a pick over the limit is a promise broken, not a saving. In its own header so that
// adaptive_regret.cpp stays one file of the four metrics' columns.

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "analysis/slowdown_interval.hpp"
#include "sim/unsampled_run.hpp"

namespace wattwise::bench {

// A slowdown over the limit by at most this many points of time counts as within it: the grid is 5 W and
// one step near the limit moves the time by about that much on the steep side of the curve.
inline constexpr double kHeadlineSlowdownSlackPct = 0.5;

// Slack on the slowdown interval's ends, in points of time, when it is judged to hold the true slowdown.
inline constexpr double kIntervalRoundingPct = 1e-9;

struct HeadlineJudgement {
  double truth_w = 0;     // the noise-free curve's lowest energy within the limit
  double regret_pct = 0;  // the pick's noise-free energy against the truth's (negative: over the limit)
  double true_slowdown_pct = 0;  // the pick's noise-free time against the reference's
  double pick_w = 0;
  int steps_from_truth = 0;     // grid steps from the truth to the pick: positive = a higher limit, faster
  bool truth_measured = false;  // the sweep ran the truth at all: an adaptive sweep can pick only what it ran
  bool flagged = false;  // the analysis said its time may be over the limit (analysis::may_exceed_limit)
  // The pick's 95% slowdown interval (Recommendation::time_vs_ref_ci95_pct) and how it was made
  // (time_vs_ref_ci95_from): whether it holds true_slowdown_pct is tallied apart for each way.
  std::optional<std::pair<double, double>> interval;
  std::optional<analysis::SlowdownIntervalFrom> interval_from;
};

// `measured_w`: the limits the sweep ran.
inline HeadlineJudgement judge_headline(const std::map<double, sim::UnsampledRun>& curve, double reference_w,
                                        double max_slowdown, double pick_w,
                                        const std::vector<double>& measured_w) {
  const sim::UnsampledRun& ref = curve.at(reference_w);
  HeadlineJudgement j;
  double truth_e = std::numeric_limits<double>::infinity();
  for (const auto& [w, r] : curve)
    if (r.time_s <= (1 + max_slowdown) * ref.time_s && r.energy_j < truth_e)
      truth_e = r.energy_j, j.truth_w = w;
  const sim::UnsampledRun& pick = curve.at(pick_w);
  j.pick_w = pick_w;
  j.truth_measured = std::find(measured_w.begin(), measured_w.end(), j.truth_w) != measured_w.end();
  const auto index = [&](double w) { return std::distance(curve.begin(), curve.find(w)); };
  j.steps_from_truth = int(index(pick_w) - index(j.truth_w));
  j.regret_pct = 100 * (pick.energy_j / truth_e - 1);
  j.true_slowdown_pct = 100 * (pick.time_s / ref.time_s - 1);
  return j;
}

struct HeadlineTally {
  double max_slowdown_pct = 10;
  std::size_t cases = 0, within_half = 0, within_one = 0, over_limit = 0, both = 0, at_truth = 0,
              within_step = 0, truth_measured = 0, flagged = 0, over_flagged = 0;
  double max_regret_pct = -std::numeric_limits<double>::infinity();
  double max_true_slowdown_pct = -std::numeric_limits<double>::infinity();
  double sum_regret_pct = 0;
  // Per way the interval was made (absent for a pick that is the reference): the picks, and those whose
  // interval holds the true slowdown.
  std::map<std::optional<analysis::SlowdownIntervalFrom>, std::pair<std::size_t, std::size_t>> interval_held;

  bool over(const HeadlineJudgement& j) const {
    return j.true_slowdown_pct > max_slowdown_pct + kHeadlineSlowdownSlackPct;
  }
  void add(const HeadlineJudgement& j) {
    ++cases;
    within_half += j.regret_pct <= 0.5;
    within_one += j.regret_pct <= 1.0;
    over_limit += over(j);
    both += j.regret_pct <= 0.5 && !over(j);
    at_truth += j.steps_from_truth == 0;
    within_step += std::abs(j.steps_from_truth) <= 1;
    truth_measured += j.truth_measured;
    flagged += j.flagged;
    over_flagged += j.flagged && over(j);
    max_regret_pct = std::max(max_regret_pct, j.regret_pct);
    max_true_slowdown_pct = std::max(max_true_slowdown_pct, j.true_slowdown_pct);
    sum_regret_pct += j.regret_pct;
    auto& [picks, held] = interval_held[j.interval_from];
    ++picks;
    // Within a rounding of the ends: a replayed table without noise (inception3) gives an interval of width 0
    // at exactly the true slowdown, which the two computations reach with different last bits.
    held += j.interval && j.interval->first - kIntervalRoundingPct <= j.true_slowdown_pct &&
            j.true_slowdown_pct <= j.interval->second + kIntervalRoundingPct;
  }
};

inline std::string headline_header() {
  return fmt::format("# {:<26} {:>5} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8} {:>8} {:>7} {:>8} {:>9} {:>7} {:>9}\n",
                     "headline", "cases", "<=0.5%", "<=1%", "max", "mean", "slow>10.5", "max slow", "both ok",
                     "=truth", "+-1 step", "truth run", "flagged", "over flag");
}

inline std::string headline_row(const std::string& name, const HeadlineTally& t) {
  if (t.cases == 0) throw std::logic_error("headline_row: no cases");
  const auto pct = [&](std::size_t n) { return 100.0 * double(n) / double(t.cases); };
  return fmt::format(
      "# {:<26} {:>5} {:>6.1f}% {:>6.1f}% {:>6.2f}% {:>6.2f}% {:>7.1f}% {:>7.2f}% {:>7.1f}% {:>6.1f}% "
      "{:>7.1f}% {:>8.1f}% {:>6.1f}% {:>9}\n",
      name, t.cases, pct(t.within_half), pct(t.within_one), t.max_regret_pct,
      t.sum_regret_pct / double(t.cases), pct(t.over_limit), t.max_true_slowdown_pct, pct(t.both),
      pct(t.at_truth), pct(t.within_step), pct(t.truth_measured), pct(t.flagged),
      fmt::format("{}/{}", t.over_flagged, t.over_limit));
}

// How often the pick's 95% interval holds its true (noise-free) slowdown, apart for an interval from both
// sides' repeats and one from the pooled spread: "held/picks" each, and the picks without one.
inline std::string interval_header() {
  return fmt::format("# {:<26} {:>14} {:>8} {:>14} {:>8} {:>11} {:>9}\n", "slowdown interval", "repeats held",
                     "", "pooled held", "", "no repeats", "reference");
}

inline std::string interval_row(const std::string& name, const HeadlineTally& t) {
  using analysis::SlowdownIntervalFrom;
  const auto count = [&](std::optional<SlowdownIntervalFrom> from) {
    const auto it = t.interval_held.find(from);
    return it == t.interval_held.end() ? std::pair<std::size_t, std::size_t>{0, 0} : it->second;
  };
  const auto held = [&](SlowdownIntervalFrom from) {
    const auto [picks, in] = count(from);
    return std::pair{fmt::format("{}/{}", in, picks),
                     picks ? fmt::format("{:.1f}%", 100.0 * double(in) / double(picks)) : std::string("-")};
  };
  const auto [repeats, repeats_pct] = held(SlowdownIntervalFrom::kRepeats);
  const auto [pooled, pooled_pct] = held(SlowdownIntervalFrom::kPooledSpread);
  return fmt::format("# {:<26} {:>14} {:>8} {:>14} {:>8} {:>11} {:>9}\n", name, repeats, repeats_pct, pooled,
                     pooled_pct, count(SlowdownIntervalFrom::kNoRepeats).first, count(std::nullopt).first);
}

}  // namespace wattwise::bench
