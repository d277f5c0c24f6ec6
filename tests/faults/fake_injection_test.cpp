// The fake driver's fault injection itself: the config is read as documented and the errors reach
// wattwise, so a passing fault trial cannot be a fault that never happened.
#include <gtest/gtest.h>

#include <fstream>

#include "fake_config.hpp"
#include "invariants.hpp"

namespace wattwise::faults {
namespace {

TEST(FakeFaultInjection, ErrorsApplyFromTheirMomentToTheirCallsOnly) {
  fake_nvml::ErrorInjection errors;
  errors.rate = 0.5;
  errors.after_s = 0.3;
  errors.until_s = 2.0;
  EXPECT_FALSE(errors.applies_to("nvmlDeviceGetPowerUsage", 0.2));
  EXPECT_TRUE(errors.applies_to("nvmlDeviceGetPowerUsage", 0.3));
  EXPECT_FALSE(errors.applies_to("nvmlDeviceGetPowerUsage", 2.0));
  EXPECT_FALSE(errors.applies_to("nvmlDeviceSetPowerManagementLimit", 1.0)) << "controls are spared";
  EXPECT_FALSE(errors.applies_to("nvmlDeviceResetGpuLockedClocks", 1.0));
  errors.controls = true;
  EXPECT_TRUE(errors.applies_to("nvmlDeviceSetPowerManagementLimit", 1.0));
  errors.calls = {"nvmlDeviceGetName"};
  EXPECT_FALSE(errors.applies_to("nvmlDeviceGetPowerUsage", 1.0));
  EXPECT_TRUE(errors.applies_to("nvmlDeviceGetName", 1.0));
}

TEST(FakeFaultInjection, ConfigIsParsedAndChecked) {
  auto config = two_gpu_config();
  config["gpus"][1]["errors"] = {{"rate", 0.05}, {"codes", {"TIMEOUT"}}, {"seed", 7}, {"after_s", 0.3}};
  config["gpus"][1]["lost_while_file_exists"] = "/nonexistent/lost";
  FaultWorld world(config);
  const auto parsed = fake_nvml::load_fake_config(world.config_path().string());
  ASSERT_TRUE(parsed.gpus[1].errors.has_value());
  EXPECT_EQ(parsed.gpus[1].errors->codes, std::vector<std::string>{"TIMEOUT"});
  EXPECT_EQ(parsed.gpus[1].errors->seed, 7u);
  EXPECT_EQ(parsed.gpus[1].lost_while_file_exists, "/nonexistent/lost");
  EXPECT_FALSE(parsed.gpus[0].errors.has_value());
  config["gpus"][1]["errors"]["rate"] = 1.5;
  world.write_config(config);
  EXPECT_THROW(fake_nvml::load_fake_config(world.config_path().string()), std::runtime_error);
}

TEST(FakeFaultInjection, InjectedErrorsReachWattwise) {
  auto config = two_gpu_config();
  config["gpus"][1]["errors"] = {{"rate", 1.0}, {"codes", {"TIMEOUT"}}, {"calls", {"nvmlDeviceGetName"}}};
  FaultWorld world(config);
  const Finished timeout = run_wattwise(world, {"info"});
  EXPECT_NE(timeout.exit_code, 0);
  EXPECT_NE(timeout.err.find("Timeout"), std::string::npos) << timeout.err;

  config = two_gpu_config();
  const auto lost = world.dir() / "lost";
  config["gpus"][0]["lost_while_file_exists"] = lost.string();
  world.write_config(config);
  EXPECT_EQ(run_wattwise(world, {"info"}).exit_code, 0);
  std::ofstream(lost).put('\n');
  const Finished gone = run_wattwise(world, {"info"});
  EXPECT_NE(gone.err.find("lost"), std::string::npos) << gone.exit_code << gone.out << gone.err;
}

}  // namespace
}  // namespace wattwise::faults
