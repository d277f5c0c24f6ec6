#include "report/html/report_builder.hpp"

#include "report/html/report_parts.hpp"
#include "report/html/trace_reader.hpp"

namespace wattwise::report::html {

ReportModel build_report_model(const analysis::Analysis& analysis, const std::vector<RunDetail>& details,
                               const ReportInfo& info, const BuildOptions& options) {
  ReportModel model;
  model.info = info;
  fill_settings(model, analysis);
  fill_traces(model, details, options);
  fill_phases(model, details);
  fill_fits(model);
  fill_node(model, details);
  fill_single_run(model, details);
  model.runs = details;
  for (auto& run : model.runs)
    if (run.power_w) run.energy_j = analysis::cumulative_energy_j(*run.power_w);
  return model;
}

ReportModel build_report_model_from_trace(std::istream& trace_csv, std::istream* phases_csv,
                                          const ReportInfo& info, const BuildOptions& options) {
  const std::string source = info.source.empty() ? "trace" : info.source;
  RunDetail run;
  const PowerTrace trace = read_power_trace(trace_csv, source);
  run.power_w = trace.power_w;
  run.gpu_power_w = trace.per_gpu_w;
  if (phases_csv) {
    auto phases = read_phases_csv_with_spans(*phases_csv, source + " (phases)");
    run.phases = std::move(phases.totals);
    run.phase_spans = std::move(phases.spans);
  }

  // One run, measured as a whole: its energy is the integral of its power trace over the job's window when
  // the trace names it (then cut there, as `wattwise measure` cuts its figures), else up to the last reading.
  const auto energy = analysis::cumulative_energy_j(*run.power_w);
  analysis::RunRecord record;
  record.time_s = trace.job_start_s && trace.job_end_s
                      ? *trace.job_end_s - *trace.job_start_s
                      : run.power_w->time_s.back() - std::min(0.0, run.power_w->time_s.front());
  record.energy_j = energy.value.back();
  const auto analysis = analysis::analyze({record});

  ReportInfo with_method = info;
  if (with_method.method.empty()) with_method.method = "power trace integrated (trapezoid)";
  return build_report_model(analysis, {run}, with_method, options);
}

}  // namespace wattwise::report::html
