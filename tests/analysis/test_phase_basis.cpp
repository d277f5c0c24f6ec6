// Job-knob sweeps judged on the work (the marked training phase), not the start-up.
#include <gtest/gtest.h>

#include "analysis/analysis.hpp"
#include "analysis/phase_basis.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

// A run of `batch` whose start-up takes startup_s at 100 W and whose training takes training_s at
// training_w; the epoch phase is the training without its first second.
RunRecord job_run(double batch, double startup_s, double training_s, double training_w, int repeat) {
  RunRecord run;
  run.setting = {{"batch", batch}};
  run.repeat = repeat;
  run.time_s = startup_s + training_s;
  run.energy_j = startup_s * 100 + training_s * training_w;
  run.work = 12800;
  run.phases.push_back({"training", 1, training_s, training_s * training_w});
  run.phases.push_back({"epoch", 1, training_s - 1, (training_s - 1) * training_w});
  return run;
}

// The H100 case of issue 12: batch 256 starts up 4 s slower, but trains faster for less energy.
std::vector<RunRecord> startup_dominated_sweep() {
  std::vector<RunRecord> runs;
  for (int repeat = 0; repeat < 2; ++repeat) {
    const double jitter = 0.01 * repeat;
    runs.push_back(job_run(64, 20 + jitter, 10 + jitter, 300, repeat));  // run 30 s, 5000 J
    runs.push_back(job_run(256, 24 + jitter, 8 + jitter, 330, repeat));  // run 32 s, 5040 J
  }
  return runs;
}

const Recommendation& for_metric(const Analysis& a, MetricKind kind) {
  for (const auto& r : a.recommendations)
    if (r.metric.kind == kind) return r;
  throw std::logic_error("metric not analysed");
}

TEST(PhaseBasis, DefaultJudgesOnTheTrainingPhaseWhereStartUpDominates) {
  AnalysisOptions options;
  options.default_setting = Setting{{"batch", 64}};
  const Analysis a = analyze(startup_dominated_sweep(), options);
  EXPECT_EQ(a.basis.phase, "training");
  EXPECT_TRUE(a.basis.automatic);
  EXPECT_DOUBLE_EQ(for_metric(a, MetricKind::kEnergy).setting.at("batch"), 256);
  EXPECT_DOUBLE_EQ(for_metric(a, MetricKind::kTime).setting.at("batch"), 256);
  EXPECT_EQ(basis_text(a.basis),
            "judged on phase 'training', the job's work (use --phase run for the whole run)");
  ASSERT_TRUE(a.basis.startup_share_mean);
  EXPECT_NEAR(*a.basis.startup_share_mean, (20.0 / 30 + 24.0 / 32) / 2, 1e-3);
  EXPECT_TRUE(a.basis.startup_dominates());
  EXPECT_NE(startup_warning(a.basis).find("start-up (run time outside phase 'training') is 71%"),
            std::string::npos)
      << startup_warning(a.basis);
}

TEST(PhaseBasis, PhaseRunJudgesTheWholeRunAndStillWarns) {
  AnalysisOptions options;
  options.default_setting = Setting{{"batch", 64}};
  options.phase = "run";
  const Analysis a = analyze(startup_dominated_sweep(), options);
  EXPECT_EQ(a.basis.phase, "run");
  EXPECT_DOUBLE_EQ(for_metric(a, MetricKind::kEnergy).setting.at("batch"), 64);
  EXPECT_DOUBLE_EQ(a.reference().time_s.mean, 30.01);
  EXPECT_NE(basis_text(a.basis).find("drop --phase run to judge on phase 'training'"), std::string::npos);
  EXPECT_NE(startup_warning(a.basis).find("whole-run figures mostly measure start-up"), std::string::npos);
}

TEST(PhaseBasis, NamedPhaseIsSummedPerRun) {
  AnalysisOptions options;
  options.default_setting = Setting{{"batch", 64}};
  options.phase = "epoch";
  const Analysis a = analyze(startup_dominated_sweep(), options);
  EXPECT_FALSE(a.basis.automatic);
  EXPECT_NEAR(a.settings.at(0).time_s.mean, 9.005, 1e-9);  // batch 64: training 10 s less 1 s
  EXPECT_NEAR(a.settings.at(0).energy_j.mean, 300 * 9.005, 1e-9);
}

TEST(PhaseBasis, JoulesPerSampleUseTheAnalysedPhasesEnergy) {
  AnalysisOptions options;
  options.default_setting = Setting{{"batch", 64}};
  const Analysis a = analyze(startup_dominated_sweep(), options);
  ASSERT_TRUE(a.settings.at(1).j_per_sample);
  EXPECT_NEAR(a.settings.at(1).j_per_sample->mean, 330 * 8.005 / 12800, 1e-9);  // batch 256, training only
}

TEST(PhaseBasis, RunsWithoutMarkersAreJudgedWhole) {
  std::vector<RunRecord> runs = startup_dominated_sweep();
  for (auto& run : runs) run.phases.clear();
  const PhasedRuns judged = judge_on_phase(runs, std::nullopt);
  EXPECT_EQ(judged.basis.phase, "run");
  EXPECT_FALSE(judged.basis.automatic);
  EXPECT_FALSE(judged.basis.startup_share_mean);
  EXPECT_EQ(basis_text(judged.basis), "judged on the whole run");
  EXPECT_DOUBLE_EQ(judged.runs.at(0).time_s, 30);
}

TEST(PhaseBasis, DefaultFallsBackToEpochWhenNotEveryRunHasTraining) {
  std::vector<RunRecord> runs = startup_dominated_sweep();
  runs[1].phases.erase(runs[1].phases.begin());  // one run lost its training marker
  EXPECT_EQ(judge_on_phase(runs, std::nullopt).basis.phase, "epoch");
}

TEST(PhaseBasis, NoStartUpWarningWhenStartUpIsSmall) {
  std::vector<RunRecord> runs = {job_run(64, 1, 10, 300, 0), job_run(256, 2, 8, 330, 0)};
  const PhasedRuns judged = judge_on_phase(runs, std::nullopt);
  EXPECT_FALSE(judged.basis.startup_dominates());  // 9% and 20%: mean 14.5% < 20%
  EXPECT_EQ(startup_warning(judged.basis), "");
}

TEST(PhaseBasis, NamedPhaseLeavesOutAndCountsRunsWithoutIt) {
  std::vector<RunRecord> runs = startup_dominated_sweep();
  runs[0].phases.pop_back();  // no epoch
  const PhasedRuns judged = judge_on_phase(runs, std::string("epoch"));
  EXPECT_EQ(judged.runs.size(), 3u);
  EXPECT_EQ(judged.basis.runs_left_out, 1u);
}

TEST(PhaseBasis, UnknownPhaseIsAUsageErrorListingThePhasesThereAre) {
  try {
    judge_on_phase(startup_dominated_sweep(), std::string("trainig"));
    FAIL() << "an unknown phase was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("phases seen: 'training', 'epoch'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wattwise::analysis
