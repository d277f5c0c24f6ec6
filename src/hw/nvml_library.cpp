#include "hw/nvml_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

#include "core/error.hpp"

namespace wattwise::hw {

using nvml_abi::nvmlReturn_t;

namespace {

// Resolves one symbol; a missing one stays null (an older driver), which callers read as "unsupported".
template <typename Pointer>
void resolve(void* handle, const char* name, Pointer& pointer) {
  pointer = reinterpret_cast<Pointer>(dlsym(handle, name));
}

std::string init_advice(nvmlReturn_t result) {
  switch (result) {
    case nvml_abi::NVML_ERROR_DRIVER_NOT_LOADED:
      return "load the NVIDIA kernel driver (is the GPU visible to this machine or container?)";
    case nvml_abi::NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "the NVML library and the kernel driver are different versions: reboot (or reload the driver) "
             "after a driver update";
    case nvml_abi::NVML_ERROR_NO_PERMISSION:
      return "this user may not open the GPU device files (/dev/nvidia*): ask an admin";
    default:
      return "check the NVIDIA driver installation (`nvidia-smi` should work)";
  }
}

}  // namespace

std::string NvmlLibrary::default_path() {
  const char* override_path = std::getenv("WATTWISE_NVML_LIB");
  if (override_path != nullptr && *override_path != '\0') return override_path;
  return "libnvidia-ml.so.1";
}

NvmlLibrary::NvmlLibrary(const std::string& library_path) {
  handle_ = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    throw environment_error(fmt::format(
        "no NVIDIA driver found ({} not loadable: {}): install the driver",
        library_path, why != nullptr ? why : "unknown reason"));
  }
#define WATTWISE_NVML_RESOLVE(name, params) resolve(handle_, #name, name);
  WATTWISE_NVML_FUNCTIONS(WATTWISE_NVML_RESOLVE)
#undef WATTWISE_NVML_RESOLVE
  resolve(handle_, "nvmlErrorString", nvmlErrorString);

  if (nvmlInit_v2 == nullptr) {
    dlclose(handle_);
    throw environment_error(fmt::format(
        "{} has no nvmlInit_v2: the NVIDIA driver is too old for wattwise, update it", library_path));
  }
  const nvmlReturn_t result = nvmlInit_v2();
  if (result != nvml_abi::NVML_SUCCESS) {
    const std::string text = error_string(result);
    dlclose(handle_);
    throw environment_error(fmt::format("NVML initialisation failed ({}): {}", text, init_advice(result)));
  }
}

NvmlLibrary::~NvmlLibrary() {
  // Shutdown errors at exit cannot be acted on; the driver drops our reference anyway.
  if (nvmlShutdown != nullptr) nvmlShutdown();
  dlclose(handle_);
}

std::string NvmlLibrary::error_string(nvmlReturn_t result) const {
  if (nvmlErrorString != nullptr) {
    const char* text = nvmlErrorString(result);
    if (text != nullptr) return text;
  }
  return fmt::format("NVML error {}", static_cast<int>(result));
}

std::string NvmlLibrary::describe_failure(unsigned gpu_index, const char* call, nvmlReturn_t result) const {
  return fmt::format("GPU {}: {} failed: {}", gpu_index, call, error_string(result));
}

}  // namespace wattwise::hw
