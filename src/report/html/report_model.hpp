#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/analysis.hpp"
#include "analysis/fit.hpp"
#include "analysis/resample.hpp"
#include "core/footprint.hpp"
#include "store/tune_table.hpp"

namespace wattwise::report::html {

// What the report shows, independent of where the data came from (a sweep database, a single measurement's
// trace CSV, a simulated sweep). The builders (report_builder.hpp) compute every number; the page only
// draws them, so everything a chart shows is testable here.

// A quantity normalised to the reference: the value on the means (as `wattwise analyze` computes it) and
// the spread of the per-run values, for error bars.
struct NormalisedValue {
  double value = 0;
  std::optional<double> stddev;     // absent with one repeat
  std::optional<double> ci95_half;  // of the per-run values' mean
};

// The quantities the per-knob charts and the energy-time plane show, in this order: avg power, energy,
// time, EDP, then one EDS(k) per k the analysis was asked for.
struct SettingResult {
  analysis::Setting setting;
  std::string label;  // "power_limit_w=150"
  std::size_t repeats = 0;
  analysis::Summary energy_j;
  std::optional<double> energy_uncertainty_j;  // the measurement's error bar on energy_j.mean (not the spread)
  analysis::Summary time_s;
  analysis::Summary power_w;
  std::map<std::string, NormalisedValue> normalised;  // metric name ("P", "E", "t", "EDP", "EDS(k=2.0)")
  bool on_pareto_front = false;
  bool is_reference = false;
};

// One run's extras that the analysis does not carry: its power trace and its phases.
struct PhaseTotal {
  std::string name;
  double time_s = 0;
  std::optional<double> energy_j;
};

// One occurrence of a phase in time (since the job started), where the phases CSV says when: for shading.
struct PhaseSpan {
  std::string name;
  double begin_s = 0;
  double end_s = 0;
};

// One GPU's power over a run, where the trace names the GPUs (the single-run layout draws each).
struct GpuTrace {
  unsigned gpu = 0;
  analysis::TimeSeries power_w;
};

struct RunDetail {
  analysis::Setting setting;
  int repeat = 0;
  std::optional<analysis::TimeSeries> power_w;   // time_s since the run started, total power of its GPUs
  std::optional<analysis::TimeSeries> energy_j;  // cumulative energy of power_w; the builder fills it in
  std::vector<GpuTrace> gpu_power_w;             // per GPU, when the trace has them
  std::vector<PhaseTotal> phases;
  std::vector<PhaseSpan> phase_spans;  // the same occurrences in time, where known (a trace's phases CSV)
  // Node power beside the GPUs over the run (docs/node-power.md): CPU packages + DRAM where the node has
  // them (powercap), and the external meter; absent when not measured.
  std::optional<double> node_cpu_dram_j;
  std::optional<double> node_meter_j;
};

// Per setting, the traces of its repeats on the report's common grid (masked: a point only where a run has
// data). Power is the mean across repeats; cumulative energy its mean and std.
struct SettingTraces {
  std::size_t setting_index = 0;
  std::size_t runs_with_trace = 0;
  std::vector<std::optional<double>> power_mean_w;
  std::vector<std::optional<double>> energy_mean_j;
  std::vector<std::optional<double>> energy_std_j;
};

struct PhaseBreakdown {
  std::vector<std::string> phase_names;  // in order of first appearance
  // [setting][phase]: mean over the repeats that ran the phase; absent where none did
  std::vector<std::vector<std::optional<double>>> time_s;
  std::vector<std::vector<std::optional<double>>> energy_j;
};

// A quadratic through the normalised means of one quantity against one knob, with the fitted optimum next
// to the measured one.
struct KnobFit {
  std::string knob;
  std::string metric;  // "E", "t", "EDP"
  analysis::QuadraticFit fit;
  double measured_optimum_x = 0;
  double measured_optimum_y = 0;
  // The results' recommendation for this quantity when it lies on this slice: the page says the
  // recommendation comes from the results, and the fitted minimum is the curve's (report_fits.cpp).
  std::optional<double> recommended_x;
  std::vector<double> xs;  // the points fitted
  std::vector<double> ys;
};

// One row of the studies' table.
struct TableRow {
  std::size_t setting_index = 0;
  std::string setting;
  std::optional<double> power_w;
  std::optional<double> energy_j;
  std::optional<double> energy_uncertainty_j;  // the measurement's error bar (+-) on energy_j; absent: unknown
  std::optional<double> energy_vs_ref_pct;
  std::optional<double> time_s;
  std::optional<double> time_vs_ref_pct;
  std::vector<std::string> optimum_for;   // metrics this setting is recommended for ("E", "EDP", ...)
  std::optional<double> node_cpu_dram_j;  // mean over the setting's runs that have it (report_node.cpp)
  std::optional<double> node_meter_j;
};

struct IsoLine {
  std::string metric;                             // "E", "EDP", "EDS(k=2.0)": where it equals the reference's
  std::vector<std::pair<double, double>> points;  // (t / t_ref, E / E_ref)
};

struct ReportInfo {
  std::string title = "wattwise report";
  std::string tool_version;
  std::string source;  // the database or trace file the report was made from
  std::string command;
  std::string gpu;
  std::string method;
  std::vector<unsigned> gpu_indices;            // the GPUs the settings were applied to (for the commands)
  std::optional<double> default_power_limit_w;  // the GPUs' default, to undo a power limit
  // The power-limit range every GPU accepts (the largest minimum, the smallest maximum), where stored.
  std::optional<double> min_power_limit_w;
  std::optional<double> max_power_limit_w;
};

// The layout of one measurement (one setting, one run): each GPU's power and their sum on the report's
// grid, and the phases to shade (report_single_run.cpp).

struct SingleRun {
  std::vector<std::string> series;                          // "GPU 0", ..., "all GPUs" (the sum) last
  std::vector<std::vector<std::optional<double>>> power_w;  // [series][grid point]
  std::vector<std::optional<double>> gpu_energy_j;          // per GPU series (not the sum), trapezoid
  std::vector<PhaseSpan> spans;                             // shaded; names with few occurrences only
  std::vector<std::string> unshaded;                        // phase names too frequent to shade
};

struct ReportModel {
  ReportInfo info;
  std::vector<std::string> knobs;
  std::vector<std::string> quantities;  // the normalised quantities, in display order
  std::vector<SettingResult> settings;  // in setting order
  std::size_t reference_index = 0;
  std::vector<std::size_t> pareto_front;  // setting indices on the front, by increasing time
  std::vector<IsoLine> iso_lines;
  std::vector<analysis::Recommendation> recommendations;
  std::size_t headline = 0;    // the recommendation of the headline's metric among `recommendations`
  std::optional<analysis::Headline> lead;  // the box at the top: within the slowdown limit (10% by default)
  std::optional<double> max_slowdown;      // --max-slowdown on every recommendation (0.10 = 10%)
  analysis::PhaseBasis basis;  // what each run's time and energy stand for (the job's work phase, or the run)
  analysis::ScopeBasis scope;  // whose energy: the job's GPUs or the node's (docs/energy-scope.md)
  // Where both scopes were analysed: the other scope's pick per recommendation (same order), and one line
  // per metric they pick differently (analysis::scope_disagreements); empty otherwise.
  std::vector<std::string> other_scope_picks;
  std::vector<std::string> scope_warnings;
  std::vector<double> grid_s;  // the common time grid of the traces; empty without traces
  std::vector<SettingTraces> traces;
  std::vector<RunDetail> runs;  // per run, as given plus cumulative energy; not in the page's JSON (size)
  PhaseBreakdown phases;
  std::vector<KnobFit> fits;
  std::vector<TableRow> table;
  std::optional<SingleRun> single_run;   // one setting measured once
  std::optional<store::TuneTrace> tune;  // a `tune --db` database's decision trace (report_tune.hpp)
  FootprintRates footprint;              // the user's carbon intensity and price (html_footprint.hpp)
};

}  // namespace wattwise::report::html
