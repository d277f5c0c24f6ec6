// Issue 12 item 5: reading a sweep database for the analysis, typed (store::read_analysis_runs) against
// the CSV round trip it replaced (export_runs_csv, then parse_runs_csv). The database is the exhaustive
// 31 power limits x 5 repeats sweep, each run with three phases (training, epoch, warmup), in a temp file.
// Issue 23: what `report` reads of a 10,000-run database (200 power limits x 50 repeats, same phases, one
// GPU row each): the analysis's runs and every run with its details (ResultsStore::runs).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "analysis/runs_csv.hpp"
#include "plan/knob.hpp"
#include "plan/plan.hpp"
#include "store/analysis_runs.hpp"

namespace wattwise::store {
namespace {

struct SweepDatabase {
  explicit SweepDatabase(const char* limits = "150:300:5", unsigned repeats = 5) {
    std::string pattern = (std::filesystem::temp_directory_path() / "wattwise-bench-XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
    plan::PlanSpec spec;
    spec.knobs.push_back(plan::parse_power_limit_knob(limits));
    spec.repeats = repeats;
    const plan::Plan plan = plan::make_plan(spec);
    ResultsStore store =
        ResultsStore::create(dir / "sweep.db", {"python train.py", "counter", "node1"},
                             plan::plan_spec_to_json(spec), {{0, "GPU-0", "V100", 150.0, 300.0, 300.0}});
    for (const auto& planned : plan.runs) {
      RunRecord run;
      run.plan_index = planned.index;
      run.settings = planned.settings;
      run.repeat = planned.repeat;
      run.started_at = run.ended_at = "2026-01-01T00:00:00Z";
      run.exit_status = 0;
      run.time_s = 60.0 + static_cast<double>(planned.index % 31);
      run.energy_j = 200.0 * *run.time_s;
      run.method = "counter";
      run.work = 100000;
      run.phases = {{std::nullopt, "training", 1, *run.time_s - 5, 190.0 * (*run.time_s - 5), 0, "counter"},
                    {std::nullopt, "epoch", 1, *run.time_s - 6, 190.0 * (*run.time_s - 6), 0, "samples"},
                    {std::nullopt, "warmup", 1, 1.0, 150.0, 0, "samples"}};
      GpuRunEnergy gpu;
      gpu.energy_j = run.energy_j;
      gpu.avg_power_w = 200.0;
      gpu.method = "counter";
      run.gpus = {gpu};
      store.add_run(run);
    }
  }
  ~SweepDatabase() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  std::filesystem::path dir;
};

const SweepDatabase& database() {
  static const SweepDatabase db;
  return db;
}

void BM_ReadAnalysisRunsTyped(benchmark::State& state) {
  const auto store = ResultsStore::open_read_only(database().dir / "sweep.db");
  for (auto _ : state) benchmark::DoNotOptimize(read_analysis_runs(store));
  state.SetItemsProcessed(state.iterations() * 155);
}
BENCHMARK(BM_ReadAnalysisRunsTyped)->Unit(benchmark::kMillisecond);

void BM_ExportCsvThenParse(benchmark::State& state) {
  const auto store = ResultsStore::open_read_only(database().dir / "sweep.db");
  for (auto _ : state) {
    std::stringstream csv;
    store.export_runs_csv(csv);
    benchmark::DoNotOptimize(analysis::parse_runs_csv(csv, "sweep.db"));
  }
  state.SetItemsProcessed(state.iterations() * 155);
}
BENCHMARK(BM_ExportCsvThenParse)->Unit(benchmark::kMillisecond);

const SweepDatabase& large_database() {
  static const SweepDatabase db("100:299:1", 50);
  return db;
}

// What build_report_model_from_store reads from the database, apart from the traces.
void BM_ReportRead10000Runs(benchmark::State& state) {
  const auto store = ResultsStore::open_read_only(large_database().dir / "sweep.db");
  for (auto _ : state) {
    benchmark::DoNotOptimize(read_analysis_runs(store));
    benchmark::DoNotOptimize(store.runs());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_ReportRead10000Runs)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wattwise::store

BENCHMARK_MAIN();
