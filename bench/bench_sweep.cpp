// The sweep's own costs: planning, a whole simulated 31 x 5 sweep (runner, simulated measurement and the
// SQLite store with a commit per run), and the analysis of its runs.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "analysis/analysis.hpp"
#include "analysis/runs_csv.hpp"
#include "plan/plan.hpp"
#include "experiment/runner.hpp"
#include "experiment/simulated_runs.hpp"
#include "sim/simulation.hpp"

namespace {

using namespace wattwise;

plan::PlanSpec spec_31x5() {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("150:300:5"));
  spec.repeats = 5;
  spec.order = plan::RunOrder::kRandom;
  spec.seed = 1;
  return spec;
}

std::filesystem::path temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "wattwise-bench-XXXXXX").string();
  return ::mkdtemp(pattern.data());
}

// As `wattwise sweep --simulate v100:resnet50 --power-limit 150:300:5 --repeat 5` runs it.
experiment::SweepOutcome simulated_sweep(const std::filesystem::path& dir) {
  sim::SimulationOptions sim_options;
  sim_options.iteration_markers_per_epoch = 8;
  auto simulation = sim::make_simulation("v100:resnet50", sim_options);
  experiment::SweepOptions options;
  options.plan = plan::make_plan(spec_31x5());
  options.gpu_indices = {0};
  options.db_path = dir / "sweep.db";
  options.settings_access = std::make_shared<safety::LocalSettingsAccess>(*simulation.system, dir / "state",
                                                                          safety::WatchdogLaunch{}, "simulated");
  measure::MeasureOptions measure_options;
  measure_options.sampler.fast_period = std::chrono::milliseconds(100);
  measure_options.sampler.counter_period = std::chrono::milliseconds(100);
  return experiment::run_sweep(*simulation.system, options,
                               experiment::simulated_measure_run(simulation, measure_options, 1),
                               *simulation.clock);
}

std::vector<analysis::RunRecord> runs_of(const std::filesystem::path& db) {
  std::stringstream csv;
  store::ResultsStore::open_read_only(db).export_runs_csv(csv);
  return analysis::parse_runs_csv(csv, db.string());
}

void BM_Plan31x5(benchmark::State& state) {
  const auto spec = spec_31x5();
  for (auto _ : state) benchmark::DoNotOptimize(plan::make_plan(spec));
}
BENCHMARK(BM_Plan31x5);

void BM_SimulatedSweep31x5(benchmark::State& state) {
  for (auto _ : state) {
    const auto dir = temp_dir();
    const auto outcome = simulated_sweep(dir);
    if (outcome.runs_done != 155) state.SkipWithError("the sweep did not run all 155 runs");
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    state.ResumeTiming();
  }
  state.counters["runs"] = 155;
}
BENCHMARK(BM_SimulatedSweep31x5)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AnalysisOfSweep31x5(benchmark::State& state) {
  const auto dir = temp_dir();
  simulated_sweep(dir);
  const auto runs = runs_of(dir / "sweep.db");
  analysis::AnalysisOptions options;
  options.default_setting = analysis::Setting{{"power_limit_w", 300}};
  for (auto _ : state) benchmark::DoNotOptimize(analysis::analyze(runs, options));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AnalysisOfSweep31x5)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
