#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "analysis/aggregate.hpp"
#include "analysis/metrics.hpp"
#include "analysis/phase_basis.hpp"
#include "analysis/recommend.hpp"
#include "analysis/run_record.hpp"

namespace wattwise::analysis {

struct AnalysisOptions {
  std::optional<Setting> reference;        // --reference knob=value[,...]; wins over default_setting
  std::optional<Setting> default_setting;  // what the caller knows to be the default (sweep database)
  std::vector<MetricSpec> metrics = default_metrics();
  std::optional<double> max_slowdown;  // 0.10 = 10%
  std::optional<std::string> phase;    // --phase: absent = the job's work phase where runs carry one
};

// Everything `wattwise analyze` prints, whatever the data's origin.
struct Analysis {
  PhaseBasis basis;                        // what each run's time and energy stand for
  std::vector<SettingAggregate> settings;  // in setting order
  std::size_t reference_index = 0;
  std::vector<bool> pareto;  // parallel to settings
  std::vector<MetricSpec> metrics;
  std::optional<double> max_slowdown;
  std::vector<Recommendation> recommendations;  // one per metric, in metrics order

  const SettingAggregate& reference() const { return settings.at(reference_index); }
};

// Judges each run on its work phase or as options.phase says (judge_on_phase), aggregates the runs over
// repeats, picks the reference, flags the Pareto front and recommends a setting for each metric. Throws
// data_error when no run succeeded and usage_error for a reference not in the data.
Analysis analyze(const std::vector<RunRecord>& runs, const AnalysisOptions& options = {});

}  // namespace wattwise::analysis
