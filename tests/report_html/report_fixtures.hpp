#pragma once

#include <vector>

#include "analysis/analysis.hpp"
#include "report/html/report_builder.hpp"

namespace wattwise::report::html::testing {

// A small synthetic power-limit sweep with exact numbers: three limits, two repeats each; the reference is
// 300 W (E 1000 J, t 10 s on average). Each run has a constant power trace and two phases.
inline std::vector<analysis::RunRecord> sweep_runs() {
  auto run = [](double limit, int repeat, double t, double e) {
    analysis::RunRecord r;
    r.setting = {{"power_limit_w", limit}};
    r.repeat = repeat;
    r.time_s = t;
    r.energy_j = e;
    return r;
  };
  return {run(200, 0, 12, 780), run(200, 1, 12, 820), run(250, 0, 11, 850),
          run(250, 1, 11, 850), run(300, 0, 9, 990),  run(300, 1, 11, 1010)};
}

inline analysis::Analysis sweep_analysis() {
  analysis::AnalysisOptions options;
  options.default_setting = analysis::Setting{{"power_limit_w", 300}};
  return analysis::analyze(sweep_runs(), options);
}

// Constant power E/t over [0, t], sampled every second, plus phases "compute" (80%) and "io" (20%).
inline std::vector<RunDetail> sweep_details() {
  std::vector<RunDetail> details;
  for (const auto& r : sweep_runs()) {
    RunDetail d;
    d.setting = r.setting;
    d.repeat = r.repeat;
    analysis::TimeSeries power;
    for (int i = 0; i <= static_cast<int>(r.time_s); ++i) {
      power.time_s.push_back(i);
      power.value.push_back(r.energy_j / r.time_s);
    }
    d.power_w = power;
    d.phases = {{"compute", 0.8 * r.time_s, 0.8 * r.energy_j}, {"io", 0.2 * r.time_s, 0.2 * r.energy_j}};
    details.push_back(std::move(d));
  }
  return details;
}

inline ReportModel sweep_model(std::size_t grid_points = 13) {
  ReportInfo info;
  info.title = "test sweep";
  info.tool_version = "0.0-test";
  BuildOptions options;
  options.grid_points = grid_points;
  return build_report_model(sweep_analysis(), sweep_details(), info, options);
}

}  // namespace wattwise::report::html::testing
