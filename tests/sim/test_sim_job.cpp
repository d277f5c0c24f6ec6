#include <gtest/gtest.h>

#include <chrono>

#include "sim/simulation.hpp"
#include "sim_test_helpers.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;
using testing::quiet_simulation;
using testing::run_to_end;
using workload::MarkerKind;

int count(const std::vector<workload::Marker>& markers, const std::string& name, MarkerKind kind) {
  int n = 0;
  for (const auto& m : markers) n += (m.name == name && m.kind == kind);
  return n;
}

TEST(SimJob, EmitsNestedMarkersForEveryIteration) {
  SimulationOptions options;
  options.noise_fraction = 0;
  options.samples_per_epoch = 1000;  // 8 iterations of 128, the last one 104 samples
  options.epochs = 2;
  Simulation sim = make_simulation("v100:resnet50", options);
  const auto markers = run_to_end(sim, *sim.job);
  ASSERT_FALSE(markers.empty());
  EXPECT_EQ(markers.front().name, "training");
  EXPECT_EQ(markers.front().kind, MarkerKind::kBegin);
  EXPECT_EQ(markers.front().t, 500ms);
  EXPECT_EQ(markers.back().name, "training");
  EXPECT_EQ(markers.back().kind, MarkerKind::kEnd);
  EXPECT_EQ(count(markers, "epoch", MarkerKind::kBegin), 2);
  EXPECT_EQ(count(markers, "iteration", MarkerKind::kBegin), 16);
  EXPECT_EQ(count(markers, "iteration", MarkerKind::kEnd), 16);
  double samples = 0;
  for (const auto& m : markers) {
    if (m.name == "iteration" && m.kind == MarkerKind::kEnd) samples += m.counters.at("samples");
  }
  EXPECT_EQ(samples, 2000);
  for (std::size_t i = 1; i < markers.size(); ++i) EXPECT_LE(markers[i - 1].t, markers[i].t);
  EXPECT_TRUE(sim.job->finished());
  EXPECT_EQ(sim.job->exit_code(), 0);
  EXPECT_FALSE(sim.job->next_event().has_value());
}

TEST(SimJob, IterationsTakeBatchOverThroughput) {
  Simulation sim = quiet_simulation(1280);
  const auto markers = run_to_end(sim, *sim.job);
  const double expected_s = 128.0 / sim.profile.workload.samples_per_s;
  Nanos previous_end{0};
  for (const auto& m : markers) {
    if (m.name != "iteration") continue;
    if (m.kind == MarkerKind::kBegin) previous_end = m.t;
    if (m.kind == MarkerKind::kEnd) {
      EXPECT_NEAR(to_seconds(m.t - previous_end), expected_s, 1e-6);
    }
  }
}

TEST(SimJob, GpuIsBusyOnlyWhileTraining) {
  Simulation sim = quiet_simulation(1280);
  SimGpu& gpu = sim.system->sim_gpu(0);
  EXPECT_FALSE(gpu.busy());
  sim.clock->sleep_until(600ms);
  sim.job->advance_to(600ms);
  EXPECT_TRUE(gpu.busy());
  run_to_end(sim, *sim.job);
  EXPECT_FALSE(gpu.busy());
}

TEST(SimJob, DefaultLimitMatchesThePublishedEpoch) {
  // resnet50 on a V100 at 300 W: 266.4 s and 262.3 W for 100,000 samples.
  Simulation sim = quiet_simulation();
  const auto markers = run_to_end(sim, *sim.job);
  Nanos begin{0}, end{0};
  for (const auto& m : markers) {
    if (m.name == "epoch") (m.kind == MarkerKind::kBegin ? begin : end) = m.t;
  }
  EXPECT_NEAR(to_seconds(end - begin), 266.4, 0.1);
  SimGpu& gpu = sim.system->sim_gpu(0);
  const double joules = gpu.model_energy_j_at(end) - gpu.model_energy_j_at(begin);
  EXPECT_NEAR(joules / to_seconds(end - begin), 262.3, 0.1);
}

TEST(SimJob, SameSeedSameRunOtherSeedOtherRun) {
  auto epoch_seconds = [](std::uint64_t seed) {
    SimulationOptions options;
    options.seed = seed;
    options.samples_per_epoch = 10000;
    Simulation sim = make_simulation("v100:vgg19", options);
    run_to_end(sim, *sim.job);
    return std::pair{to_seconds(sim.clock->now()), *sim.system->gpu(0).energy_mj()};
  };
  EXPECT_EQ(epoch_seconds(7), epoch_seconds(7));
  const auto a = epoch_seconds(7);
  const auto b = epoch_seconds(8);
  EXPECT_NE(a.first, b.first);
  EXPECT_NEAR(a.first, b.first, 0.1 * a.first);  // noise is about 1%, not more
}

TEST(SimJob, NewJobRunsAgainOnTheSameGpusKeepingTheirSettings) {
  Simulation sim = quiet_simulation(5000);
  run_to_end(sim, *sim.job);
  const Nanos first = sim.clock->now();
  sim.system->gpu(0).set_power_limit_w(150);
  auto second = sim.new_job(2);
  run_to_end(sim, *second);
  EXPECT_GT(sim.clock->now() - first, first);  // the capped run is slower
  EXPECT_EQ(second->exit_code(), 0);
}

TEST(SimJob, TerminateStopsTheLoad) {
  Simulation sim = quiet_simulation();
  sim.clock->sleep_until(5s);
  sim.job->advance_to(5s);
  sim.job->terminate(5s);
  EXPECT_TRUE(sim.job->finished());
  EXPECT_EQ(sim.job->exit_code(), 143);
  EXPECT_FALSE(sim.system->sim_gpu(0).busy());
}

TEST(SimJob, TwoGpusShareTheEpoch) {
  Simulation one = quiet_simulation(12800, 1);
  Simulation two = quiet_simulation(12800, 2);
  run_to_end(one, *one.job);
  run_to_end(two, *two.job);
  const double busy_one = to_seconds(one.clock->now()) - 1.0;
  const double busy_two = to_seconds(two.clock->now()) - 1.0;
  EXPECT_NEAR(busy_two, busy_one / 2, 0.01);
  EXPECT_GT(*two.system->gpu(1).energy_mj(), 0u);
}

// (How fast a simulated epoch runs is bench/'s to say, not a timed unit test's.)
TEST(SimJob, AFullEpochMarksEveryIterationAndFewerMarkersChangeNothingElse) {
  SimulationOptions options;
  Simulation sim = make_simulation("v100:resnet50", options);  // 782 marked iterations
  const auto markers = run_to_end(sim, *sim.job);
  EXPECT_EQ(count(markers, "iteration", MarkerKind::kEnd), 782);

  options.iteration_markers_per_epoch = 10;
  Simulation coarse = make_simulation("v100:resnet50", options);
  const auto few = run_to_end(coarse, *coarse.job);
  EXPECT_EQ(count(few, "iteration", MarkerKind::kEnd), 10);
  EXPECT_EQ(coarse.clock->now(), sim.clock->now());  // same run, fewer events
}

}  // namespace
}  // namespace wattwise::sim
