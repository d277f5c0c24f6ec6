#pragma once

#include <string>

#include "hw/nvml_abi.hpp"

namespace wattwise::hw {

// The loaded NVML library: dlopen'd at run time (the build machines have no driver), initialised for as
// long as this object lives. Each entry point is a function pointer that is null when the driver does not
// export it (an older driver): callers treat null as "not supported", never call it.
class NvmlLibrary {
 public:
  // Loads `library_path`, resolves every symbol and calls nvmlInit_v2. Throws environment_error when the
  // library cannot be loaded or initialisation fails.
  explicit NvmlLibrary(const std::string& library_path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // WATTWISE_NVML_LIB if set, else the driver's "libnvidia-ml.so.1".
  static std::string default_path();

  // The driver's text for a return code; works even when nvmlErrorString is missing.
  std::string error_string(nvml_abi::nvmlReturn_t result) const;

  // One-line message naming the GPU, the call and the driver's text, e.g.
  // "GPU 1: nvmlDeviceSetPowerManagementLimit failed: Insufficient Permissions".
  std::string describe_failure(unsigned gpu_index, const char* call, nvml_abi::nvmlReturn_t result) const;

  // Function pointers, one per NVML entry point we use, named like the symbol. The aliases let the
  // parameter lists of WATTWISE_NVML_FUNCTIONS name the ABI types unqualified.
#define WATTWISE_NVML_POINTER(name, params) nvml_abi::nvmlReturn_t(*name) params = nullptr;
  using nvmlDevice_t = nvml_abi::nvmlDevice_t;
  using nvmlPciInfo_t = nvml_abi::nvmlPciInfo_t;
  using nvmlFieldValue_t = nvml_abi::nvmlFieldValue_t;
  using nvmlSamplingType_t = nvml_abi::nvmlSamplingType_t;
  using nvmlValueType_t = nvml_abi::nvmlValueType_t;
  using nvmlSample_t = nvml_abi::nvmlSample_t;
  using nvmlClockType_t = nvml_abi::nvmlClockType_t;
  using nvmlUtilization_t = nvml_abi::nvmlUtilization_t;
  using nvmlTemperatureSensors_t = nvml_abi::nvmlTemperatureSensors_t;
  using nvmlPstates_t = nvml_abi::nvmlPstates_t;
  using nvmlPcieUtilCounter_t = nvml_abi::nvmlPcieUtilCounter_t;
  using nvmlMemory_t = nvml_abi::nvmlMemory_t;
  using nvmlProcessInfo_t = nvml_abi::nvmlProcessInfo_t;
  WATTWISE_NVML_FUNCTIONS(WATTWISE_NVML_POINTER)
#undef WATTWISE_NVML_POINTER
  nvml_abi::nvmlErrorString_fn nvmlErrorString = nullptr;

 private:
  void* handle_ = nullptr;
};

}  // namespace wattwise::hw
