#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/metrics.hpp"
#include "report/html/report_model.hpp"

namespace wattwise::report::html {

// How to put a recommended setting in place by hand: nvidia-smi lines for the hardware knobs (one per GPU
// and knob: `-i N -pl W`, `-lgc F,F`, `-lmc F,F`; without known GPUs, no `-i`, which means every GPU),
// the lines that undo them (the default power limit, else the reference's; `-rgc`, `-rmc`), and the job
// knobs the job must be run with ("batch=128"). Empty when the setting is the reference's.
struct ApplyCommands {
  std::vector<std::string> apply;  // change GPU settings: need root, last until reset or reboot
  std::vector<std::string> undo;
  std::vector<std::string> job;  // "batch=128": for the job's own command line
};
ApplyCommands apply_commands(const analysis::Setting& setting, const analysis::Setting& reference,
                             const std::vector<unsigned>& gpu_indices,
                             std::optional<double> default_power_limit_w);

// "power limit 190 W, batch 128": a setting for people.
std::string setting_words(const analysis::Setting& setting);

// Makes the recommendation for `metric` the page's headline; the lead (the analysis's headline, within its
// slowdown limit) stays only if it is for the same metric. A metric the analysis did not compute is a
// usage_error (the CLI adds the chosen metric to the analysis, so it always is).
void set_headline(ReportModel& model, const analysis::MetricSpec& metric);

// The box at the top of the page: the lead (the lowest energy at most 10% slower than the reference by
// default; --metric, --max-slowdown) with the pick without the limit beside it, else the headline
// recommendation; its band, its saving against the reference, where the optimum may lie beyond the range,
// and the commands that apply it, or "keep the current setting" when the pick is the reference or not
// distinguishable from it; for one run, what to run next instead. Empty without recommendations.
std::string recommendation_box_html(const ReportModel& model);

// Short, exact definitions of E, t, EDP, ED2P, EDS(k) (each k the page shows), gain-loss, the reference,
// the band and "beyond the noise".
std::string metric_definitions_html(const ReportModel& model);

}  // namespace wattwise::report::html
