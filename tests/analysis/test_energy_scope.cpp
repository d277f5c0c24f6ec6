// Issue 21 item 5: the energy scope, the job's GPUs or the node's, and the default where the GPU count
// varies.
#include <gtest/gtest.h>

#include "analysis/analysis.hpp"
#include "analysis/energy_scope.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

constexpr double kIdleW = 80;

// A run of the job on `gpus` of a 4-GPU node: its GPUs draw job_w together for t_s; the others idle at 80 W.
// The training phase is the whole run less 1 s of start-up, at the same powers.
RunRecord gpu_run(double gpus, double t_s, double job_w, int repeat) {
  RunRecord run;
  run.setting = {{"gpus", gpus}};
  run.repeat = repeat;
  run.time_s = t_s;
  run.energy_j = job_w * t_s;
  run.job_gpus = static_cast<unsigned>(gpus);
  run.measured_gpus = 4;
  run.node = NodeParts{(job_w + (4 - gpus) * kIdleW) * t_s, std::nullopt, std::nullopt, std::nullopt};
  PhaseRecord training{"training", 1, t_s - 1, job_w * (t_s - 1)};
  training.node =
      NodeParts{(job_w + (4 - gpus) * kIdleW) * (t_s - 1), std::nullopt, std::nullopt, std::nullopt};
  run.phases.push_back(training);
  return run;
}

// One GPU: 300 W for 11 s (10 s training: 3000 J); four: 1260 W for 3.5 s (2.5 s training: 3150 J, +5%).
std::vector<RunRecord> gpu_count_sweep() {
  std::vector<RunRecord> runs;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const double jitter = 0.002 * repeat;
    runs.push_back(gpu_run(1, 11 + jitter, 300, repeat));
    runs.push_back(gpu_run(4, 3.5 + jitter, 1260, repeat));
  }
  return runs;
}

// Whether `call` throws a usage error (exit code 2).
template <typename F>
bool refused_as_usage(F call) {
  try {
    call();
  } catch (const Error& e) {
    return e.kind() == ErrorKind::kUsage;
  }
  return false;
}

// The sweep's reference, as `sweep` stores it for a job knob: its first value.
AnalysisOptions with_reference(Setting reference = {{"gpus", 1}}) {
  AnalysisOptions options;
  options.default_setting = std::move(reference);
  return options;
}

double energy_pick(const Analysis& a) {
  for (const auto& r : a.recommendations)
    if (r.metric.kind == MetricKind::kEnergy) return r.setting.at("gpus");
  throw std::logic_error("E not analysed");
}

TEST(EnergyScope, ParsesJobAndNodeOnly) {
  EXPECT_EQ(parse_energy_scope("job"), EnergyScope::kJob);
  EXPECT_EQ(parse_energy_scope("node"), EnergyScope::kNode);
  EXPECT_TRUE(refused_as_usage([] { parse_energy_scope("gpus"); }));
  EXPECT_EQ(to_string(EnergyScope::kNode), "node");
}

TEST(EnergyScope, GpuCountSweepIsJudgedOnTheNodeByDefaultAndShowsTheJobBeside) {
  const Analysis a = analyze(gpu_count_sweep(), with_reference());
  EXPECT_EQ(a.basis.phase, "training");
  EXPECT_EQ(a.scope.scope, EnergyScope::kNode);
  EXPECT_TRUE(a.scope.automatic);
  EXPECT_TRUE(a.scope.gpu_count_varies);
  EXPECT_EQ(a.scope.most_idle_gpus, 3u);
  EXPECT_DOUBLE_EQ(energy_pick(a), 4);
  // 1 GPU: (300 + 240) W x 10 s on the node.
  EXPECT_NEAR(a.settings.at(0).energy_j.mean, 5400, 5);
  ASSERT_TRUE(a.other_scope);
  EXPECT_EQ(a.other_scope->scope.scope, EnergyScope::kJob);
  EXPECT_DOUBLE_EQ(energy_pick(*a.other_scope), 1);
  EXPECT_NEAR(a.other_scope->settings.at(0).energy_j.mean, 3000, 5);
  const auto lines = scope_disagreements(a);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "E: gpus=4 on the node's energy (judged), gpus=1 on the job's GPUs' alone");
  EXPECT_NE(scope_text(a.scope).find("energy of the node (every measured GPU, idle ones included)"),
            std::string::npos);
}

TEST(EnergyScope, JobScopeOnRequestOrWhereTheGpuCountIsFixed) {
  AnalysisOptions options = with_reference();
  options.energy_scope = EnergyScope::kJob;
  const Analysis asked = analyze(gpu_count_sweep(), options);
  EXPECT_EQ(asked.scope.scope, EnergyScope::kJob);
  EXPECT_FALSE(asked.scope.automatic);
  EXPECT_DOUBLE_EQ(energy_pick(asked), 1);

  // Two GPUs of four in every run: the job's own GPUs by default, the node beside them (idle ones differ).
  std::vector<RunRecord> fixed;
  for (int repeat = 0; repeat < 2; ++repeat) {
    RunRecord a = gpu_run(2, 6, 600, repeat), b = gpu_run(2, 5, 700, repeat);
    a.setting = {{"batch", 128}};
    b.setting = {{"batch", 256}};
    fixed.push_back(a);
    fixed.push_back(b);
  }
  const Analysis by_default = analyze(fixed, with_reference({{"batch", 128}}));
  EXPECT_EQ(by_default.scope.scope, EnergyScope::kJob);
  EXPECT_FALSE(by_default.scope.gpu_count_varies);
  EXPECT_TRUE(by_default.scope.node_differs);
  EXPECT_TRUE(by_default.other_scope);
  EXPECT_NE(scope_text(by_default.scope).find("--energy-scope node"), std::string::npos);
}

TEST(EnergyScope, NothingToChooseWhereTheNodeIsTheJob) {
  std::vector<RunRecord> runs = gpu_count_sweep();
  for (auto& run : runs) {
    run.node.reset();  // a runs CSV: no per-GPU figures
    run.job_gpus.reset();
    for (auto& phase : run.phases) phase.node.reset();
  }
  const Analysis a = analyze(runs, with_reference());
  EXPECT_EQ(a.scope.scope, EnergyScope::kJob);
  EXPECT_FALSE(a.other_scope);
  EXPECT_EQ(scope_text(a.scope), "");
  AnalysisOptions node = with_reference();
  node.energy_scope = EnergyScope::kNode;
  EXPECT_TRUE(refused_as_usage([&] { analyze(runs, node); }));
}

TEST(EnergyScope, GpuCountVariesButThePhaseHasNoNodeFigureFallsBackAndSaysWhy) {
  std::vector<RunRecord> runs = gpu_count_sweep();
  for (auto& run : runs)
    for (auto& phase : run.phases) phase.node.reset();  // a database from before the table
  const Analysis a = analyze(runs, with_reference());
  EXPECT_EQ(a.scope.scope, EnergyScope::kJob);
  EXPECT_NE(a.scope.note.find("no node energy over phase 'training' (a database written before wattwise "
                              "stored the node per phase: try --phase run)"),
            std::string::npos);
  AnalysisOptions whole = with_reference();
  whole.phase = "run";
  EXPECT_EQ(analyze(runs, whole).scope.scope, EnergyScope::kNode);  // the whole runs have it
}

TEST(EnergyScope, TheMeterWhereEveryRunHasOneElseGpusCpuAndDram) {
  std::vector<RunRecord> runs = gpu_count_sweep();
  for (auto& run : runs) {
    run.node->cpu_package_j = 100.0;
    run.node->dram_j = 10.0;
  }
  AnalysisOptions whole = with_reference();
  whole.phase = "run";
  const Analysis parts = analyze(runs, whole);
  EXPECT_EQ(parts.scope.node_parts, (std::vector<std::string>{"gpus", "cpu_package", "dram"}));
  EXPECT_NEAR(parts.settings.at(0).energy_j.mean, 540 * 11.002 + 110, 5);
  runs.front().node->dram_j.reset();  // one run without DRAM: DRAM is left out of every run
  EXPECT_EQ(analyze(runs, whole).scope.node_parts, (std::vector<std::string>{"gpus", "cpu_package"}));
  for (auto& run : runs) run.node->meter_j = 9000.0;
  const Analysis meter = analyze(runs, whole);
  EXPECT_EQ(meter.scope.node_parts, (std::vector<std::string>{"meter"}));
  EXPECT_DOUBLE_EQ(meter.settings.at(0).energy_j.mean, 9000);
}

}  // namespace
}  // namespace wattwise::analysis
