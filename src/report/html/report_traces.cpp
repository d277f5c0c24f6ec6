#include <algorithm>

#include "analysis/resample.hpp"
#include "report/html/report_parts.hpp"

namespace wattwise::report::html {

namespace {

// The runs of each setting, by index into model.settings; details of unknown settings are dropped.
std::vector<std::vector<const RunDetail*>> runs_by_setting(const ReportModel& model,
                                                           const std::vector<RunDetail>& details) {
  std::vector<std::vector<const RunDetail*>> by_setting(model.settings.size());
  for (const auto& d : details) {
    const std::size_t i = find_setting(model, d.setting);
    if (i < by_setting.size()) by_setting[i].push_back(&d);
  }
  return by_setting;
}

}  // namespace

void fill_traces(ReportModel& model, const std::vector<RunDetail>& details, const BuildOptions& options) {
  model.grid_s.clear();
  model.traces.clear();
  const auto by_setting = runs_by_setting(model, details);
  double end_s = 0;
  for (const auto& runs : by_setting)
    for (const auto* run : runs)
      if (run->power_w && !run->power_w->time_s.empty()) end_s = std::max(end_s, run->power_w->time_s.back());
  if (end_s <= 0) return;  // no traces: the report leaves the trace charts out
  model.grid_s = analysis::uniform_grid(end_s, std::max<std::size_t>(options.grid_points, 2));

  for (std::size_t i = 0; i < by_setting.size(); ++i) {
    std::vector<std::vector<std::optional<double>>> power, energy;
    for (const auto* run : by_setting[i]) {
      if (!run->power_w || run->power_w->time_s.empty()) continue;
      power.push_back(analysis::resample_linear(*run->power_w, model.grid_s));
      energy.push_back(analysis::resample_linear(analysis::cumulative_energy_j(*run->power_w), model.grid_s));
    }
    if (power.empty()) continue;
    SettingTraces traces;
    traces.setting_index = i;
    traces.runs_with_trace = power.size();
    traces.power_mean_w = analysis::masked_mean_std(power).mean;
    auto energy_stats = analysis::masked_mean_std(energy);
    traces.energy_mean_j = std::move(energy_stats.mean);
    traces.energy_std_j = std::move(energy_stats.stddev);
    model.traces.push_back(std::move(traces));
  }
}

void fill_phases(ReportModel& model, const std::vector<RunDetail>& details) {
  PhaseBreakdown breakdown;
  for (const auto& d : details)
    for (const auto& p : d.phases)
      if (std::find(breakdown.phase_names.begin(), breakdown.phase_names.end(), p.name) ==
          breakdown.phase_names.end())
        breakdown.phase_names.push_back(p.name);
  const auto by_setting = runs_by_setting(model, details);
  const std::size_t phases = breakdown.phase_names.size();
  for (const auto& runs : by_setting) {
    // Sums per run first (a phase may occur many times in one run), then the mean over the runs that ran it.
    std::vector<double> time_sum(phases, 0), energy_sum(phases, 0);
    std::vector<int> time_runs(phases, 0), energy_runs(phases, 0);
    for (const auto* run : runs) {
      std::vector<double> run_time(phases, 0), run_energy(phases, 0);
      std::vector<bool> ran(phases, false), energy_complete(phases, true);
      for (const auto& p : run->phases) {
        const auto k = static_cast<std::size_t>(
            std::find(breakdown.phase_names.begin(), breakdown.phase_names.end(), p.name) -
            breakdown.phase_names.begin());
        ran[k] = true;
        run_time[k] += p.time_s;
        if (p.energy_j)
          run_energy[k] += *p.energy_j;
        else
          energy_complete[k] = false;
      }
      for (std::size_t k = 0; k < phases; ++k) {
        if (!ran[k]) continue;
        time_sum[k] += run_time[k];
        ++time_runs[k];
        if (!energy_complete[k]) continue;
        energy_sum[k] += run_energy[k];
        ++energy_runs[k];
      }
    }
    std::vector<std::optional<double>> time(phases), energy(phases);
    for (std::size_t k = 0; k < phases; ++k) {
      if (time_runs[k] > 0) time[k] = time_sum[k] / time_runs[k];
      if (energy_runs[k] > 0) energy[k] = energy_sum[k] / energy_runs[k];
    }
    breakdown.time_s.push_back(std::move(time));
    breakdown.energy_j.push_back(std::move(energy));
  }
  model.phases = std::move(breakdown);
}

}  // namespace wattwise::report::html
