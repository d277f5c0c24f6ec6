// Cost of `wattwise analyze` on a large sweep: 10^4 runs (31 power limits x 4 batch sizes x ~80 repeats),
// generated here as CSV text so the benchmark needs no files.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "analysis/analysis.hpp"
#include "analysis/runs_csv.hpp"

namespace wattwise::analysis {
namespace {

constexpr int kRuns = 10000;

// A plausible power-capping curve: time grows as the limit drops, energy has a minimum near 180 W.
std::string generate_runs_csv() {
  std::mt19937 random(42);
  std::normal_distribution<double> noise(1.0, 0.01);
  const int batches[] = {32, 64, 128, 256};
  std::ostringstream csv;
  csv << "power_limit_w,batch,repeat,time_s,energy_j,work,label\n";
  for (int i = 0; i < kRuns; ++i) {
    const double limit_w = 150 + 5 * (i % 31);
    const int batch = batches[(i / 31) % 4];
    const double time_s = 40 * std::pow(300 / limit_w, 0.35) * (1 + 16.0 / batch) * noise(random);
    const double power_w = 0.6 * limit_w + 0.001 * (limit_w - 180) * (limit_w - 180);
    csv << limit_w << ',' << batch << ',' << i / 124 << ',' << time_s << ','
        << power_w * time_s * noise(random) << ",100000,\"synthetic, seeded\"\n";
  }
  return csv.str();
}

const std::string& runs_csv() {
  static const std::string text = generate_runs_csv();
  return text;
}

std::vector<RunRecord> parsed_runs() {
  std::istringstream in(runs_csv());
  return parse_runs_csv(in, "generated.csv");
}

void BM_ParseRunsCsv(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(parsed_runs());
  state.SetItemsProcessed(state.iterations() * kRuns);
}
BENCHMARK(BM_ParseRunsCsv)->Unit(benchmark::kMillisecond);

void BM_AggregateRuns(benchmark::State& state) {
  const auto runs = parsed_runs();
  for (auto _ : state) benchmark::DoNotOptimize(aggregate_runs(runs));
  state.SetItemsProcessed(state.iterations() * kRuns);
}
BENCHMARK(BM_AggregateRuns)->Unit(benchmark::kMillisecond);

void BM_AnalyzeWithRecommendations(benchmark::State& state) {
  const auto runs = parsed_runs();
  AnalysisOptions options;
  options.reference = Setting{{"batch", 128}, {"power_limit_w", 300}};
  options.metrics = metrics_with({"eds:1.25"});
  options.max_slowdown = 0.10;
  for (auto _ : state) benchmark::DoNotOptimize(analyze(runs, options));
  state.SetItemsProcessed(state.iterations() * kRuns);
}
BENCHMARK(BM_AnalyzeWithRecommendations)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace wattwise::analysis

BENCHMARK_MAIN();
