// What the adaptive decisions read from the store: the runs on analyze's default basis.
#include "experiment/adaptive_runner.hpp"

#include <cstdio>
#include <memory>

#include <gtest/gtest.h>

#include "experiment/progress.hpp"
#include "../support/temp_dir.hpp"

namespace wattwise::experiment {
namespace {

using testing::TempDir;

plan::PlanSpec limits_spec() {
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("150,300"));
  spec.repeats = 1;
  return spec;
}

// A run of 100 s and 20 kJ, of which the marked training phase took `training_s` and `training_j`.
store::RunRecord run_with_training(const plan::PlannedRun& planned, double training_s, double training_j) {
  store::RunRecord run;
  run.plan_index = planned.index;
  run.settings = planned.settings;
  run.repeat = planned.repeat;
  run.started_at = "2025-01-01T00:00:00Z";
  run.ended_at = "2025-01-01T00:01:40Z";
  run.exit_status = 0;
  run.time_s = 100;
  run.energy_j = 20000;
  run.method = "counter";
  run.gpus.push_back({0, 20000, 200.0, 250.0, "counter", 150.0, std::nullopt, std::nullopt});
  run.phases.push_back({std::nullopt, "training", 1, training_s, training_j, 10, "counter"});
  return run;
}

TEST(AdaptiveRunner, ObservationsAreTheTrainingPhaseWhereEveryRunCarriesOne) {
  TempDir dir;
  const plan::Plan plan = plan::make_plan(limits_spec());
  store::ResultsStore store = store::ResultsStore::create(
      dir.path() / "a.db", {"python train.py", "counter", "node1"}, plan::plan_spec_to_json(limits_spec()),
      {{0, "GPU-aaa", "H100", 150.0, 300.0, 300.0}});
  store.add_run(run_with_training(plan.runs.at(0), 40, 6000));
  store.add_run(run_with_training(plan.runs.at(1), 30, 7000));
  const auto runs = adaptive_observations(store, "power_limit_w");
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) {
    // The whole run (100 s, 20 kJ, start-up included) is not what analyze recommends from by default.
    EXPECT_EQ(r.time_s, r.value == 150 ? 40 : 30) << r.value;
    EXPECT_EQ(r.energy_j, r.value == 150 ? 6000 : 7000) << r.value;
  }
}

// A run budget counts the runs that succeeded: after 2 of 6 made failed, a budget of 10 holds 6 more, so the
// progress line reads "run 7/12", not "run 7/10" (which stuck at 10/10 for the last runs).
TEST(AdaptiveRunner, ARunBudgetsProgressCountGrowsWithFailedRuns) {
  TempDir dir;
  plan::PlanSpec spec;
  spec.knobs.push_back(plan::parse_power_limit_knob("150:300:50"));
  spec.repeats = 4;
  const plan::Plan plan = plan::make_plan(spec);
  store::ResultsStore store = store::ResultsStore::create(dir.path() / "a.db", {"python train.py", "counter", "node1"},
                                                          plan::plan_spec_to_json(spec),
                                                          {{0, "GPU-aaa", "H100", 150.0, 300.0, 300.0}});
  for (std::size_t i = 0; i < 6; ++i) {
    store::RunRecord run = run_with_training(plan.runs.at(i), 40, 6000);
    if (i == 1 || i == 4) {
      run.exit_status = 3;
      run.error = "exit status 3";
    }
    store.add_run(run);
  }
  AdaptiveConfig config;
  config.knob = "power_limit_w";
  config.grid = {150, 200, 250, 300};
  config.reference_value = 300;
  config.metrics = {analysis::MetricSpec{analysis::MetricKind::kEnergy}};
  config.budget_runs = 10;
  config.precision = 50;
  std::FILE* sink = std::tmpfile();
  ASSERT_NE(sink, nullptr);
  Progress progress(sink, false);
  progress.begin(10, 6);
  const auto next = adaptive_next_run(config, plan, &progress, std::make_shared<AdaptiveLog>());
  ASSERT_TRUE(next(store).has_value());
  EXPECT_EQ(progress.line().rfind("run 7/12 ", 0), 0u) << progress.line();
  std::fclose(sink);
}

}  // namespace
}  // namespace wattwise::experiment
