#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/aggregate.hpp"
#include "analysis/energy_scope.hpp"
#include "analysis/metrics.hpp"
#include "analysis/phase_basis.hpp"
#include "analysis/recommend.hpp"
#include "analysis/run_record.hpp"

namespace wattwise::analysis {

// The headline's slowdown limit when neither --metric nor --max-slowdown says otherwise: the lowest energy at
// most 10% slower than the reference is a setting people can deploy (docs/analysis-json.md "headline").
inline constexpr double kDefaultHeadlineSlowdown = 0.10;

struct AnalysisOptions {
  std::optional<Setting> reference;        // --reference knob=value[,...]; wins over default_setting
  std::optional<Setting> default_setting;  // what the caller knows to be the default (sweep database)
  std::vector<MetricSpec> metrics = default_metrics();
  std::optional<double> max_slowdown;       // 0.10 = 10%
  std::optional<std::string> phase;         // --phase: absent = the job's work phase where runs carry one
  std::optional<EnergyScope> energy_scope;  // --energy-scope: absent = the node where the GPU count varies
  bool compare_scopes = true;  // also analyse the other scope where the node's energy is not the job's
  MetricSpec headline_metric;          // the report's box and the sweep's closing line (E by default)
  std::optional<double> headline_max_slowdown = kDefaultHeadlineSlowdown;  // absent: no limit
};

// What the report's box and the sweep's closing line lead with: the recommendation for one metric within a
// slowdown limit, and the same metric's recommendation without the limit beside it.
struct Headline {
  MetricSpec metric;
  std::optional<double> max_slowdown;           // 0.10 = 10%; absent: no limit
  Recommendation pick;                          // within the limit
  std::optional<Recommendation> unconstrained;  // without it; absent when there is no limit
};

// Whether the headline's pick qualified on the time curve (Recommendation::time_vs_ref_curve_pct within the
// limit) while its own runs' mean is over the limit: both are said, so that a table showing +10.4% beside a
// "at most 10% slower" headline is explained, not a contradiction.
bool judged_within_on_the_curve_only(const Headline& headline);


// Whether the headline's pick, within the limit, may be over it within the noise: the 95%
// interval of its slowdown reaches past the limit (the reference itself never is). The pick stands (it is
// the lowest energy the means allow); the box and the JSON say so, so that whoever deploys it knows.
bool may_exceed_limit(const Headline& headline);

// Whether the headline has a limit and a pick other than the reference whose slowdown has no interval at all:
// no setting was run twice, so nothing says how noisy its time is. Said in the box and the closing lines
// rather than left out: a pick run once is the least sure of all (time_vs_ref_ci95_from kNoRepeats).
bool slowdown_unknown(const Headline& headline);

// Everything `wattwise analyze` prints, whatever the data's origin.
struct Analysis {
  PhaseBasis basis;                        // what each run's time and energy stand for
  ScopeBasis scope;                        // whose energy: the job's GPUs or the node's
  std::vector<SettingAggregate> settings;  // in setting order
  std::size_t reference_index = 0;
  std::vector<bool> pareto;  // parallel to settings
  std::vector<MetricSpec> metrics;
  std::optional<double> max_slowdown;
  std::vector<Recommendation> recommendations;  // one per metric, in metrics order
  // The same analysis on the other energy scope, where the node's energy is not the job's GPUs'
  // (scope.node_differs); null otherwise. Its settings are in the same order as these.
  std::shared_ptr<const Analysis> other_scope;
  Headline headline;

  const SettingAggregate& reference() const { return settings.at(reference_index); }
};

// One line per metric whose pick differs between the two scopes ("E: gpus=4 on the node's energy, gpus=1
// on the job's GPUs' alone"); empty without other_scope or when they agree.
std::vector<std::string> scope_disagreements(const Analysis& analysis);

// Judges each run on its work phase or as options.phase says (judge_on_phase), on the energy scope
// options.energy_scope says (apply_energy_scope), aggregates the runs over
// repeats, picks the reference, flags the Pareto front and recommends a setting for each metric. Throws
// data_error when no run succeeded and usage_error for a reference not in the data.
Analysis analyze(const std::vector<RunRecord>& runs, const AnalysisOptions& options = {});

}  // namespace wattwise::analysis
