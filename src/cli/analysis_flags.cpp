#include "cli/analysis_flags.hpp"

#include "analysis/metrics.hpp"
#include "analysis/reference.hpp"

namespace wattwise::cli {

void add_analysis_flags(CLI::App& app, AnalysisFlags& flags) {
  app.add_option("--metric", flags.metrics,
                 "add a metric: E, edp, ed2p, eds:K (e.g. eds:1.5), gain-loss, time (repeatable)");
  app.add_option("--max-slowdown", flags.max_slowdown,
                 "only recommend settings at most this much slower than the reference, e.g. 10%; 'none' "
                 "lifts the 10% the headline keeps by default");
  app.add_option("--reference", flags.reference, "the reference setting, e.g. power_limit_w=300");
  app.add_option("--phase", flags.phase,
                 "judge each run on this marked phase (default: 'training', else 'epoch', where every run "
                 "has it); 'run' for the whole run, start-up included");
  app.add_option(
      "--energy-scope", flags.energy_scope,
      "judge runs on the energy of the job's GPUs (job) or of the node: every measured GPU, idle ones "
      "included, + CPU/DRAM or a meter (node); default: node where the GPU count varies");
}

void apply_analysis_flags(const AnalysisFlags& flags, analysis::AnalysisOptions& options) {
  options.metrics = analysis::metrics_with(flags.metrics);
  // The headline (the report's box, the sweep's closing line): the first --metric, else E; within
  // --max-slowdown, else within 10% unless a --metric was chosen (docs/analysis-json.md "headline").
  if (!flags.metrics.empty()) {
    options.headline_metric = analysis::parse_metric(flags.metrics.front());
    options.headline_max_slowdown = std::nullopt;
  }
  if (!flags.max_slowdown.empty()) apply_max_slowdown(flags.max_slowdown, options);
  if (!flags.reference.empty()) options.reference = analysis::parse_setting_spec(flags.reference);
  if (!flags.phase.empty()) options.phase = flags.phase;
  if (!flags.energy_scope.empty()) options.energy_scope = analysis::parse_energy_scope(flags.energy_scope);
}

void apply_max_slowdown(const std::string& max_slowdown, analysis::AnalysisOptions& options) {
  options.max_slowdown = analysis::parse_max_slowdown_flag(max_slowdown);
  options.headline_max_slowdown = options.max_slowdown;
}

}  // namespace wattwise::cli
