#include <gtest/gtest.h>

#include "core/error.hpp"
#include "fake_nvml_env.hpp"

namespace wattwise::hw {
namespace {

using testing::FakeNvmlEnv;

TEST(NvmlIdentity, ListsEveryGpuWithNameUuidAndPciBusId) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  ASSERT_EQ(system->count(), 2u);
  EXPECT_EQ(system->backend(), "nvml");
  EXPECT_EQ(system->driver_version(), "580.159.04");
  const GpuIdentity& second = system->gpu(1).identity();
  EXPECT_EQ(second.index, 1u);
  EXPECT_EQ(second.uuid, "GPU-bbbb");
  EXPECT_EQ(second.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(second.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(system->gpu(0).identity().uuid, "GPU-aaaa");
}

TEST(NvmlIdentity, TheProductionFactoryLoadsTheLibraryNamedInWattwiseNvmlLib) {
  FakeNvmlEnv env(testing::two_gpu_config());
  setenv("WATTWISE_NVML_LIB", FAKE_NVML_PATH, 1);
  EXPECT_EQ(NvmlLibrary::default_path(), FAKE_NVML_PATH);
  const std::unique_ptr<ControllableGpuSystem> system = make_gpu_system();
  unsetenv("WATTWISE_NVML_LIB");
  ASSERT_EQ(system->count(), 2u);
  EXPECT_EQ(system->gpu(0).identity().uuid, "GPU-aaaa");
  EXPECT_EQ(NvmlLibrary::default_path(), "libnvidia-ml.so.1");
}

TEST(NvmlIdentity, AskingForAGpuBeyondTheCountIsAUsageError) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  try {
    system->gpu(2);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("this host has 2"), std::string::npos) << e.what();
  }
}

TEST(NvmlIdentity, LimitsComeBackInWattsWithConstraintsDefaultAndEnforced) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  const auto limits = system->gpu(1).power_limits();
  ASSERT_TRUE(limits.has_value());
  EXPECT_DOUBLE_EQ(limits->min_w, 200);
  EXPECT_DOUBLE_EQ(limits->max_w, 700);
  EXPECT_DOUBLE_EQ(limits->default_w, 700);
  EXPECT_DOUBLE_EQ(limits->current_w, 600);
  EXPECT_DOUBLE_EQ(limits->enforced_w, 600);
}

TEST(NvmlIdentity, SupportedClocksAreListedPerMemoryClock) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);
  EXPECT_EQ(gpu.supported_mem_clocks_mhz(), (std::vector<unsigned>{2619, 1593}));
  EXPECT_EQ(gpu.supported_sm_clocks_mhz(2619), (std::vector<unsigned>{1980, 1500, 1200, 345}));
  EXPECT_TRUE(gpu.supported_sm_clocks_mhz(1234).empty()) << "a memory clock the GPU lacks has no SM clocks";
}

TEST(NvmlIdentity, CapabilitiesReportEveryReadingOfACurrentDriver) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system(/*root=*/true);
  const Capabilities caps = system->gpu(0).capabilities();
  EXPECT_TRUE(caps.energy_counter);
  EXPECT_TRUE(caps.power_instant);
  EXPECT_TRUE(caps.power_average);
  EXPECT_TRUE(caps.power_samples);
  EXPECT_TRUE(caps.clocks);
  EXPECT_TRUE(caps.temperature);
  EXPECT_TRUE(caps.throttle_reasons);
  EXPECT_TRUE(caps.power_limit_read);
  EXPECT_TRUE(caps.power_limit_set);
  EXPECT_TRUE(caps.sm_clock_lock);
  EXPECT_TRUE(caps.mem_clock_lock);
  EXPECT_TRUE(caps.set_permission_note.empty()) << caps.set_permission_note;
}

TEST(NvmlIdentity, WithoutRootSettingsAreNotChangeableAndTheNoteSaysWhy) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system(/*root=*/false);
  const Capabilities caps = system->gpu(0).capabilities();
  EXPECT_TRUE(caps.power_limit_read);
  EXPECT_FALSE(caps.power_limit_set);
  EXPECT_FALSE(caps.sm_clock_lock);
  EXPECT_FALSE(caps.mem_clock_lock);
  EXPECT_NE(caps.set_permission_note.find("root"), std::string::npos) << caps.set_permission_note;
}

}  // namespace
}  // namespace wattwise::hw
