#pragma once

// The iterations measured at one candidate and what they say: the metric's estimate and its interval. One
// piece of code for the baseline (the start value, the reference of the normalised metric), every probe of
// the search, and the settled setting's drift windows.

#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/metrics.hpp"

namespace wattwise::tune {

// The two-sided quantile of Student's t behind an interval at `confidence` (e.g. 0.90 or 0.95), from
// analysis/statistics (Boost.Math).
double t_quantile(double confidence, double df);

struct ProbeEstimate {
  // The setting the iterations were measured at (Probe::value()): what a decision made on this estimate
  // names as measured (Decision::estimate_of), which need not be the setting just left (the start value's
  // re-measurements decide on the candidates measured before them).
  double value = 0;
  std::uint64_t iterations = 0;  // with energy (those the metric rests on)
  double mean_time_s = 0;
  double time_half_s = 0;  // half-width of the mean time's interval (0 with fewer than 2 iterations)
  double mean_energy_j = 0;
  // The metric on the means, oriented so that lower is better (negated where higher is better), and the
  // half-width of its interval from the spread of the per-iteration metric values.
  double score = 0;
  double score_half = 0;
  // The spread behind the halves: sums of squared deviations about this probe's means, of the per-iteration
  // score and of the per-iteration time relative to the mean time, and their degrees of freedom.
  double score_ss = 0;
  double time_ss_relative = 0;
  // Sums of the products of neighbouring iterations' deviations (the same scales): their correlation.
  double score_lag_sp = 0;
  double time_lag_sp_relative = 0;
  double df = 0;
  double time_df = 0;
  double low() const { return score - score_half; }
  double high() const { return score + score_half; }
};

// The noise of one iteration of this job, pooled over the probes of a search (as the band test pools the
// noise of one run over the settings): it varies little between settings, and a probe of 5 iterations alone
// can draw a spread far below the truth and stop on a lucky interval.
class NoisePool {
 public:
  void add(const ProbeEstimate& e);
  // `e` with its halves from the pooled spread (its own included), in place of its own spread alone. When `e`
  // is against a reference that is itself a mean worth `reference_iterations` iterations (> 0), the score's
  // interval takes its noise too.
  ProbeEstimate pooled(const ProbeEstimate& e, double confidence, double reference_iterations = 0) const;

 private:
  double score_ss_ = 0;
  double score_lag_sp_ = 0;
  double time_ss_relative_ = 0;
  double time_lag_sp_relative_ = 0;
  double df_ = 0;
  double time_df_ = 0;
};

class Probe {
 public:
  explicit Probe(double value) : value_(value) {}

  double value() const { return value_; }
  void add(double time_s, std::optional<double> energy_j);
  std::uint64_t iterations() const { return times_s_.size(); }            // every kept iteration
  std::uint64_t energy_iterations() const { return energies_j_.size(); }  // those with energy
  // Absent until an iteration with energy arrived.
  std::optional<ProbeEstimate> estimate(const analysis::MetricSpec& metric,
                                        const analysis::ReferencePoint& ref, double confidence) const;
  // An estimate of no iterations at this probe's setting, for a probe whose energy never came: a decision
  // made on it still names the setting it was measured at.
  ProbeEstimate no_estimate() const {
    ProbeEstimate e;
    e.value = value_;
    return e;
  }
  // The reference point this probe gives as a baseline (its mean energy and time).
  std::optional<analysis::ReferencePoint> reference() const;
  const std::vector<double>& times_s() const { return times_s_; }
  const std::vector<double>& energies_j() const { return energies_j_; }

 private:
  double value_;
  std::vector<double> times_s_;        // every kept iteration
  std::vector<double> paired_time_s_;  // iterations with energy: their time ...
  std::vector<double> energies_j_;     // ... and energy
};

}  // namespace wattwise::tune
