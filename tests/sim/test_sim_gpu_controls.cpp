#include <gtest/gtest.h>

#include "core/error.hpp"
#include "sim/power_model.hpp"
#include "sim/simulation.hpp"
#include "sim_test_helpers.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;
using testing::quiet_simulation;

TEST(SimGpuControls, LimitsMatchTheBoard) {
  Simulation sim = make_simulation("h100:resnet50");
  const auto limits = *sim.system->gpu(0).power_limits();
  EXPECT_EQ(limits.min_w, 200);
  EXPECT_EQ(limits.max_w, 700);
  EXPECT_EQ(limits.default_w, 700);
  EXPECT_EQ(sim.system->gpu(0).supported_sm_clocks_mhz(2619).size(), 110u);
  EXPECT_EQ(make_simulation("v100:vgg19").system->gpu(0).supported_sm_clocks_mhz(877).size(), 187u);
  EXPECT_TRUE(sim.system->gpu(0).supported_sm_clocks_mhz(1234).empty());
}

TEST(SimGpuControls, OutOfRangeLimitIsRejectedNamingTheRange) {
  Simulation sim = quiet_simulation();
  hw::Gpu& gpu = sim.system->gpu(0);
  try {
    gpu.set_power_limit_w(140);
    FAIL() << "140 W accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("150-300 W"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gpu.set_power_limit_w(301), Error);
  EXPECT_EQ(gpu.power_limits()->current_w, 300);
  gpu.set_power_limit_w(150);
  EXPECT_EQ(gpu.power_limits()->current_w, 150);
}

TEST(SimGpuControls, InvalidClockLocksAreRejected) {
  Simulation sim = quiet_simulation();
  hw::Gpu& gpu = sim.system->gpu(0);
  EXPECT_THROW(gpu.lock_sm_clocks_mhz(900, 800), Error);
  EXPECT_THROW(gpu.lock_sm_clocks_mhz(100, 800), Error);
  EXPECT_THROW(gpu.lock_mem_clocks_mhz(877, 1000), Error);
  EXPECT_NO_THROW(gpu.lock_sm_clocks_mhz(1000, 1000));
}

TEST(SimGpuControls, PowerNeverExceedsTheLimitBeyondTheOvershoot) {
  for (double limit_w : {150.0, 200.0, 250.0}) {
    Simulation sim = quiet_simulation(5000);
    SimGpu& gpu = sim.system->sim_gpu(0);
    gpu.set_power_limit_w(limit_w);
    double peak_w = 0;
    for (Nanos t = 0ms; t < 8s; t += 10ms) {
      sim.clock->sleep_until(t);
      sim.job->advance_to(t);
      peak_w = std::max(peak_w, gpu.model_power_w_at(t));
      peak_w = std::max(peak_w, *gpu.power_instant_w());
      for (const auto& sample : gpu.power_samples_since(0)) peak_w = std::max(peak_w, sample.power_w);
    }
    EXPECT_LE(peak_w, gpu.max_power_w() + 1e-9) << limit_w;
    EXPECT_GT(peak_w, limit_w) << "the brief overshoot at the load step should show";
  }
}

TEST(SimGpuControls, TimeGrowsAndPowerFallsAsTheLimitFalls) {
  const SimProfile profile = find_profile("v100", "vgg19");
  double previous_power_w = 1e9;
  double previous_speed = 1e9;
  for (double limit_w = 300; limit_w >= 150; limit_w -= 10) {
    const auto point = busy_operating_point(profile.gpu, profile.workload, GpuSettings{limit_w, {}, {}});
    EXPECT_LE(point.power_w, previous_power_w + 1e-9);
    EXPECT_LE(point.speed, previous_speed + 1e-9);
    EXPECT_LE(point.power_w, limit_w);
    previous_power_w = point.power_w;
    previous_speed = point.speed;
  }
  EXPECT_LT(previous_speed, 0.85);  // a real slowdown at 150 W
}

TEST(SimGpuControls, LockedClocksShowTheDvfsValley) {
  const SimProfile profile = find_profile("v100", "resnet50");
  double best_energy = 1e18;
  unsigned best_mhz = 0;
  double previous_time = 0;
  for (unsigned mhz : profile.gpu.sm_clocks_mhz) {  // descending
    const auto point = busy_operating_point(profile.gpu, profile.workload, GpuSettings{300, mhz, {}});
    const double time_s = 1.0 / point.speed;
    EXPECT_GE(time_s, previous_time - 1e-12);  // slower clock, longer run
    previous_time = time_s;
    const double energy = point.power_w * time_s;
    if (energy < best_energy) {
      best_energy = energy;
      best_mhz = mhz;
    }
  }
  EXPECT_GT(best_mhz, 500u);   // not at the bottom: static power dominates there
  EXPECT_LT(best_mhz, 1300u);  // not at the top either
}

TEST(SimGpuControls, LoweringTheLimitMidRunSlowsTheJobFromThatInstant) {
  Simulation fast = quiet_simulation(20000);
  testing::run_to_end(fast, *fast.job);
  Simulation slow = quiet_simulation(20000);
  slow.clock->sleep_until(10s);
  slow.job->advance_to(10s);
  slow.system->gpu(0).set_power_limit_w(150);
  slow.clock->sleep_until(11s);
  slow.job->advance_to(11s);
  EXPECT_LE(*slow.system->gpu(0).power_instant_w(), 150.0);
  testing::run_to_end(slow, *slow.job);
  EXPECT_GT(slow.clock->now(), fast.clock->now() + 5s);
}

TEST(SimGpuSystem, HoldsTheRequestedGpusWithStableIdentities) {
  SimulationOptions options;
  options.gpus = 4;
  Simulation sim = make_simulation("rtx6000:resnet50", options);
  EXPECT_EQ(sim.system->backend(), "simulated");
  ASSERT_EQ(sim.system->count(), 4u);
  EXPECT_EQ(sim.system->gpu(2).identity().index, 2u);
  EXPECT_NE(sim.system->gpu(0).identity().uuid, sim.system->gpu(1).identity().uuid);
  EXPECT_EQ(sim.system->gpu(1).identity().uuid,
            make_simulation("rtx6000:resnet50", options).system->gpu(1).identity().uuid);
  EXPECT_NE(sim.system->gpu(0).identity().name.find("(simulated)"), std::string::npos);
  EXPECT_THROW(sim.system->gpu(4), Error);
}

TEST(SimProfiles, UnknownNamesListTheValidOnes) {
  try {
    make_simulation("v100:resnet51");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("resnet152"), std::string::npos) << e.what();
  }
  try {
    make_simulation("a100:resnet50");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rtx6000"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_simulation("v100"), Error);
  EXPECT_EQ(profile_names().size(), 12u);
}

}  // namespace
}  // namespace wattwise::sim
