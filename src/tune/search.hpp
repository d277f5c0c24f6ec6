#pragma once

// The bracket behind the tuner: a golden-section search over the knob's candidates (a grid of values, lowest
// first) on a metric that is unimodal in the setting, with the two escapes the measurements may ask for: a
// slowdown budget that rules out the low end, and a coarse scan when the metric turns out not to be unimodal.
// It only chooses which candidate to measure next; the tuner measures it.

#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "analysis/curve_model.hpp"
#include "tune/probe.hpp"

namespace wattwise::tune {

// The final fit's window (analysis::fit_curve's half_width_fraction): the candidates within 0.3 of the
// measured range of the lowest mean (45 W of 150..300 W), where the sweeps take 0.2 (30 W). A candidate's
// probe here is 11-15 iterations (EDP known to about +-2.5%), far noisier than a sweep's runs, and the
// quadratic's vertex over more of them varies less than it is pulled by the curve's asymmetry. Chosen on
// bench_tune_regret's seeds 101..120 (0.14, 0.2, 0.25, 0.3, 0.4, 0.5 tried: the goal rose from 0.14 to
// 0.3 and stayed flat to 0.5; docs/evidence/tune-benchmark.md).
inline constexpr double kTunerFitHalfWidthFraction = 0.3;

class Search {
 public:
  explicit Search(std::size_t candidates) : hi_(candidates - 1), candidates_(candidates) {}
  // `values`: the candidates' settings (ascending), for the final fit across them (choice()).
  explicit Search(const std::vector<double>& values)
      : hi_(values.size() - 1), candidates_(values.size()), values_(values) {}

  // What is known of candidate `index` once its probe ended: its estimate, or that its time is over the
  // budget. A lower setting is never faster, so every candidate below an infeasible one is infeasible too.
  void record(std::size_t index, const ProbeEstimate& estimate);
  void record_infeasible(std::size_t index);
  // The budget's edge decided from a fit of time across the candidates (tuner_search.cpp): the lowest
  // feasible candidate becomes `index`, up or down; candidates it readmits get back the estimates they had.
  void set_budget_edge(std::size_t index);
  std::size_t lowest_feasible() const { return lowest_feasible_; }
  // Measured without a usable estimate (no iteration with energy): never probed again, never chosen.
  void record_unknown(std::size_t index) { unknown_.push_back(index); }

  // The next candidate to measure; absent when the search is over (then best() is the answer).
  std::optional<std::size_t> next();
  // The feasible measured candidate with the lowest score.
  std::optional<std::size_t> best() const;
  // The candidate to settle on once next() is absent: the lowest point of a quadratic through the measured
  // candidates nearest the bracket (the best measured one while fewer than three are); absent when no
  // feasible candidate was measured.
  std::optional<std::size_t> choice() const;
  // With iterations to spare once next() is absent: the unmeasured feasible candidate nearest the fitted
  // optimum (absent when all are measured or there is no fit).
  std::optional<std::size_t> refine() const;
  bool measured(std::size_t index) const {
    return estimates_.contains(index) || infeasible(index) ||
           std::find(unknown_.begin(), unknown_.end(), index) != unknown_.end();
  }
  bool infeasible(std::size_t index) const { return lowest_feasible_ > index; }
  const std::map<std::size_t, ProbeEstimate>& estimates() const { return estimates_; }

  // Whether the measurements contradict unimodality: a feasible candidate whose interval lies above those of
  // a lower and a higher one. The first time, the search turns to a coarse scan of the feasible range and
  // then a golden section around the scan's best; returns the bump's candidate when it does.
  std::optional<std::size_t> check_unimodal();
  std::size_t scan_stride() const { return scan_stride_; }
  std::size_t low() const { return lo_; }
  std::size_t high() const { return hi_; }

 private:
  double score(std::size_t index) const;
  // Neither the metric nor the time tells the two apart (their intervals overlap).
  bool on_plateau(std::size_t a, std::size_t b) const;
  std::optional<std::size_t> next_in_bracket();
  std::optional<std::size_t> next_in_scan();
  std::optional<std::size_t> next_in_final_window();
  struct FittedChoice {
    std::size_t choice = 0;
    std::size_t lowest = 0;  // the range of the candidates the fit rests on
    std::size_t highest = 0;
  };
  std::optional<FittedChoice> fitted_choice() const;
  struct CurveFitted {
    std::vector<analysis::CurvePoint> points;
    std::vector<std::size_t> index_of;
    analysis::CurveFit fit;
  };
  std::optional<CurveFitted> curve_fit() const;

  std::size_t lo_ = 0;
  std::size_t hi_;
  std::size_t candidates_;
  std::size_t lowest_feasible_ = 0;
  std::map<std::size_t, ProbeEstimate> estimates_;
  std::map<std::size_t, ProbeEstimate> below_edge_;  // estimates of candidates ruled over the budget
  std::vector<std::size_t> unknown_;
  bool fallback_used_ = false;
  bool scanning_ = false;
  std::deque<std::size_t> scan_;
  std::size_t scan_stride_ = 1;
  std::optional<std::vector<double>> values_;
};

}  // namespace wattwise::tune
