// CUDA_VISIBLE_DEVICES read as the CUDA runtime reads it, resolved against the GPUs NVML lists.
#include "hw/cuda_visible_devices.hpp"

#include <gtest/gtest.h>

namespace wattwise::hw {
namespace {

const std::vector<VisibleCandidate> kThreeGpus = {
    {0, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", {}},
    {1,
     "GPU-8932aaaa-1111-2222-3333-444444444444",
     {"MIG-1a2b3c4d-0000-1111-2222-333344445555", "MIG-9f8e7d6c-0000-1111-2222-333344445555"}},
    {2, "GPU-ffff0000-1111-2222-3333-444444444444", {}},
};

std::vector<std::size_t> positions(const ResolvedVisibleDevices& r) {
  std::vector<std::size_t> out;
  for (const auto& g : r.gpus) out.push_back(g.position);
  return out;
}

TEST(CudaVisibleDevices, IndicesSelectThoseGpusInTheGivenOrder) {
  const auto r = resolve_cuda_visible_devices("2,0", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{2, 0}));
  EXPECT_FALSE(r.stopped_at);
  EXPECT_TRUE(r.uses_indices);
}

TEST(CudaVisibleDevices, AnInvalidEntryEndsTheListAsCudaDoes) {
  const auto r = resolve_cuda_visible_devices("0,2,-1,1", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{0, 2}));
  ASSERT_TRUE(r.stopped_at);
  EXPECT_EQ(*r.stopped_at, "-1");
}

TEST(CudaVisibleDevices, AnIndexWithTrailingTextIsInvalid) {
  const auto r = resolve_cuda_visible_devices("1x,0", kThreeGpus);
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(r.stopped_at.value_or(""), "1x");
}

TEST(CudaVisibleDevices, AnIndexThatNamesNoGpuEndsTheListWithAReason) {
  const auto r = resolve_cuda_visible_devices("1,7,0", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{1}));
  EXPECT_EQ(r.stopped_at.value_or(""), "7");
  EXPECT_EQ(r.stop_reason, "names no GPU");
}

TEST(CudaVisibleDevices, AnEmptyValueMeansNoGpu) {
  for (const char* value : {"", "  "}) {
    const auto r = resolve_cuda_visible_devices(value, kThreeGpus);
    EXPECT_TRUE(r.gpus.empty()) << "'" << value << "'";
    EXPECT_FALSE(r.stopped_at) << "'" << value << "'";
  }
}

TEST(CudaVisibleDevices, SpacesAroundEntriesAreIgnored) {
  EXPECT_EQ(positions(resolve_cuda_visible_devices(" 1 , 2", kThreeGpus)), (std::vector<std::size_t>{1, 2}));
}

TEST(CudaVisibleDevices, AFullGpuUuidSelectsThatGpu) {
  const auto r = resolve_cuda_visible_devices("GPU-ffff0000-1111-2222-3333-444444444444", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{2}));
  EXPECT_FALSE(r.uses_indices);
  EXPECT_FALSE(r.gpus.at(0).mig);
}

TEST(CudaVisibleDevices, AUniqueUuidPrefixSelectsThatGpu) {
  EXPECT_EQ(positions(resolve_cuda_visible_devices("GPU-8932f,GPU-ff", kThreeGpus)),
            (std::vector<std::size_t>{0, 2}));
}

TEST(CudaVisibleDevices, AnAmbiguousUuidPrefixEndsTheList) {
  const auto r = resolve_cuda_visible_devices("GPU-ff,GPU-8932", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{2}));
  EXPECT_EQ(r.stopped_at.value_or(""), "GPU-8932");
  EXPECT_NE(r.stop_reason.find("more than one GPU"), std::string::npos);
}

TEST(CudaVisibleDevices, AUuidThatNamesNoGpuEndsTheList) {
  const auto r = resolve_cuda_visible_devices("GPU-0123", kThreeGpus);
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_EQ(r.stopped_at.value_or(""), "GPU-0123");
}

TEST(CudaVisibleDevices, AMigInstanceMapsToItsParentGpu) {
  const auto r = resolve_cuda_visible_devices("MIG-GPU-8932aaaa-1111-2222-3333-444444444444/1/0", kThreeGpus);
  ASSERT_EQ(positions(r), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(r.gpus[0].mig);
  const auto parsed = parse_cuda_visible_devices("MIG-GPU-8932aaaa/3/7");
  ASSERT_EQ(parsed.entries.size(), 1u);
  EXPECT_EQ(parsed.entries[0].form, VisibleForm::kMigInstance);
  EXPECT_EQ(parsed.entries[0].uuid, "GPU-8932aaaa");
  EXPECT_EQ(parsed.entries[0].gpu_instance, 3u);
  EXPECT_EQ(parsed.entries[0].compute_instance, 7u);
}

TEST(CudaVisibleDevices, AMigInstanceWithoutBothInstanceIdsIsInvalid) {
  for (const char* value : {"MIG-GPU-8932aaaa/1", "MIG-GPU-8932aaaa/x/0", "MIG-GPU-/1/0"}) {
    const auto parsed = parse_cuda_visible_devices(value);
    EXPECT_TRUE(parsed.entries.empty()) << value;
    EXPECT_EQ(parsed.stopped_at.value_or(""), value);
  }
}

TEST(CudaVisibleDevices, AMigUuidMapsToTheGpuThatListsIt) {
  const auto r = resolve_cuda_visible_devices("MIG-9f8e", kThreeGpus);
  ASSERT_EQ(positions(r), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(r.gpus[0].mig);
}

TEST(CudaVisibleDevices, AMigUuidNoGpuListsEndsTheList) {
  const auto r = resolve_cuda_visible_devices("MIG-0000", kThreeGpus);
  EXPECT_TRUE(r.gpus.empty());
  EXPECT_NE(r.stop_reason.find("MIG device"), std::string::npos);
}

TEST(CudaVisibleDevices, TwoMigDevicesOfOneGpuAreThatGpuOnce) {
  const auto r = resolve_cuda_visible_devices("MIG-1a2b,MIG-9f8e,2", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{1, 2}));
  EXPECT_FALSE(r.stopped_at);
}

TEST(CudaVisibleDevices, AGpuNamedTwiceEndsTheList) {
  const auto r = resolve_cuda_visible_devices("0,GPU-8932f937,2", kThreeGpus);
  EXPECT_EQ(positions(r), (std::vector<std::size_t>{0}));
  EXPECT_EQ(r.stop_reason, "repeats an earlier GPU");
}

TEST(CudaVisibleDevices, IndicesOnAMixedNodeWithoutPciBusOrderWarn) {
  const auto r = resolve_cuda_visible_devices("1", kThreeGpus);
  const std::vector<std::string> mixed = {"NVIDIA H100", "NVIDIA A100", "NVIDIA H100"};
  const std::vector<std::string> same = {"NVIDIA H100", "NVIDIA H100", "NVIDIA H100"};
  EXPECT_TRUE(device_order_warning(r, std::nullopt, mixed));
  EXPECT_TRUE(device_order_warning(r, "FASTEST_FIRST", mixed));
  EXPECT_FALSE(device_order_warning(r, "PCI_BUS_ID", mixed));
  EXPECT_FALSE(device_order_warning(r, std::nullopt, same));
  EXPECT_FALSE(device_order_warning(resolve_cuda_visible_devices("GPU-ff", kThreeGpus), std::nullopt, mixed));
}

}  // namespace
}  // namespace wattwise::hw
