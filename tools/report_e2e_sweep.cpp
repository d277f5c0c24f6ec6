// Writes the report of a simulated power-limit sweep, for the browser test (tools/report_e2e.sh) and the
// screenshots in docs/: v100:resnet50, N power limits from the GPU's minimum to its maximum, R repeats each,
// with 20 ms power traces and phases, through the same measurement path as `wattwise measure --simulate`.
//
//   report_e2e_sweep OUT.html [--limits N] [--repeats R] [--samples-per-epoch S]
//                    [--md OUT.md] [--csv OUT.csv] [--trace-report TRACE.html] [--batches 64,128]
//   report_e2e_sweep OUT.html --from INPUT   the report of a sweep database or trace CSV instead
// --batches adds a second knob, the batch size per GPU (a job knob), to test reports of several knobs.
// Prints the number of charts the sweep's page must draw; with --trace-report, also writes the reference
// run's trace CSV and phases CSV beside TRACE.html, the single-measurement report made from them
// (`wattwise report trace.csv`), and prints that page's chart count on a second line.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "analysis/analysis.hpp"
#include "core/error.hpp"
#include "core/version.hpp"
#include "measure/simulated_session.hpp"
#include "report/html/html_report.hpp"
#include "report/html/report_builder.hpp"
#include "report/html/report_input.hpp"
#include "report/html/report_tables.hpp"
#include "report/trace_csv.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace wattwise;

struct Args {
  std::string html;
  std::string md;
  std::string csv;
  std::string trace_report;
  std::string from;
  std::vector<unsigned> batches;  // empty: one knob only
  int limits = 31;
  int repeats = 5;
  long samples_per_epoch = 12000;
};

Args parse(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--limits")
      args.limits = std::stoi(value());
    else if (a == "--repeats")
      args.repeats = std::stoi(value());
    else if (a == "--samples-per-epoch")
      args.samples_per_epoch = std::stol(value());
    else if (a == "--md")
      args.md = value();
    else if (a == "--csv")
      args.csv = value();
    else if (a == "--trace-report")
      args.trace_report = value();
    else if (a == "--from")
      args.from = value();
    else if (a == "--batches")
      for (std::istringstream in(value()); !in.eof();) {
        std::string item;
        std::getline(in, item, ',');
        args.batches.push_back(static_cast<unsigned>(std::stoul(item)));
      }
    else
      args.html = a;
  }
  if (args.html.empty() || args.limits < 2 || args.repeats < 1)
    throw usage_error("usage: report_e2e_sweep OUT.html [--limits N>=2] [--repeats R>=1] [--md F] [--csv F]");
  return args;
}

report::html::RunDetail detail_of(const measure::Measurement& m, const analysis::Setting& setting,
                                  int repeat) {
  report::html::RunDetail d;
  d.setting = setting;
  d.repeat = repeat;
  analysis::TimeSeries power;
  for (const auto& s : m.traces.at(0).power_samples) {
    const double t = to_seconds(s.t - m.job_start);
    if (t < 0 || (!power.time_s.empty() && t <= power.time_s.back())) continue;
    power.time_s.push_back(t);
    power.value.push_back(s.power_w);
  }
  d.power_w = std::move(power);
  for (const auto& p : m.phase_summaries) d.phases.push_back({p.name, p.time_s, p.energy_j});
  return d;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw environment_error("cannot write " + path);
}

// The path of `wattwise report trace.csv`: the files a measurement writes, read back.
void write_trace_report(const std::string& html_path, const measure::Measurement& m,
                        report::html::ReportInfo info) {
  const std::string base = html_path.substr(0, html_path.rfind('.'));
  std::ostringstream trace, phases;
  report::write_trace_csv(trace, m);
  report::write_phases_csv(phases, m);
  write(base + ".trace.csv", trace.str());
  write(base + ".trace.phases.csv", phases.str());
  std::istringstream trace_in(trace.str()), phases_in(phases.str());
  info.title = "wattwise report: one simulated run at the default power limit";
  info.source = base + ".trace.csv";
  info.method = "";
  const auto model = report::html::build_report_model_from_trace(trace_in, &phases_in, info);
  write(html_path, report::html::render_html_report(model));
  std::cout << report::html::chart_ids(model).size() << "\n";
}

int run(const Args& args) {
  if (!args.from.empty()) {
    const auto model = report::html::load_report_model(args.from, {}, kVersion);
    write(args.html, report::html::render_html_report(model));
    std::cout << report::html::chart_ids(model).size() << "\n";
    return 0;
  }
  sim::SimulationOptions sim_options;
  sim_options.samples_per_epoch = args.samples_per_epoch;
  sim_options.epochs = 2;
  sim_options.iteration_markers_per_epoch = 20;
  auto simulation = sim::make_simulation("v100:resnet50", sim_options);
  const auto& spec = simulation.profile.gpu;

  std::vector<analysis::RunRecord> runs;
  std::vector<report::html::RunDetail> details;
  std::uint64_t seed = 1;
  std::optional<measure::Measurement> reference_run;
  const unsigned default_batch = simulation.profile.workload.default_batch;
  const std::vector<unsigned> batches =
      args.batches.empty() ? std::vector<unsigned>{default_batch} : args.batches;
  for (int i = 0; i < args.limits; ++i) {
    const double limit_w = spec.min_limit_w + (spec.max_limit_w - spec.min_limit_w) * i / (args.limits - 1);
    simulation.system->sim_gpu(0).set_power_limit_w(limit_w);
    for (std::size_t b = 0; b < batches.size(); ++b)
      for (int repeat = 0; repeat < args.repeats; ++repeat) {
        simulation.options.batch = batches[b];
        simulation.job = simulation.new_job(seed++);
        const auto m = measure::measure_simulated(simulation, {});
        analysis::Setting setting = {{"power_limit_w", limit_w}};
        if (!args.batches.empty()) setting["batch"] = batches[b];
        analysis::RunRecord run;
        run.setting = setting;
        run.repeat = repeat;
        run.time_s = m.wall_s();
        run.energy_j = m.total_energy_j().value_or(0);
        run.ok = m.total_energy_j().has_value();
        runs.push_back(std::move(run));
        details.push_back(detail_of(m, setting, repeat));
        if (i == args.limits - 1 && b == 0 && repeat == 0) reference_run = m;
      }
  }
  analysis::AnalysisOptions options;
  options.default_setting = analysis::Setting{{"power_limit_w", spec.default_limit_w}};
  if (!args.batches.empty()) (*options.default_setting)["batch"] = batches.back();
  const auto analysis = analysis::analyze(runs, options);

  report::html::ReportInfo info;
  const std::string batch_note =
      args.batches.empty() ? "" : fmt::format(" x {} batch sizes", args.batches.size());
  info.title = fmt::format("wattwise report: simulated sweep, {} power limits{} x {} repeats", args.limits,
                           batch_note, args.repeats);
  info.tool_version = kVersion;
  info.source = "simulated (tools/report_e2e_sweep)";
  info.command = "simulated v100:resnet50";
  info.gpu = spec.name;
  info.method = "counter+samples (simulated)";
  const auto model = report::html::build_report_model(analysis, details, info);
  write(args.html, report::html::render_html_report(model));
  if (!args.md.empty()) write(args.md, report::html::render_tables_markdown(model));
  if (!args.csv.empty()) write(args.csv, report::html::render_tables_csv(model));
  std::cout << report::html::chart_ids(model).size() << "\n";  // charts the page must draw
  if (!args.trace_report.empty()) write_trace_report(args.trace_report, *reference_run, info);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse(argc, argv));
  } catch (const wattwise::Error& e) {
    std::cerr << "report_e2e_sweep: " << e.what() << "\n";
    return e.exit_code();
  }
}
