// A fake libnvidia-ml.so.1 for tests: exports the NVML entry points of hw/nvml_abi.hpp and answers them from
// the JSON config named by WATTWISE_FAKE_NVML_CONFIG (see fake_config.hpp), behaving like the H100 we
// measured: a stale energy counter, a lagging averaged power, 20 ms buffered samples. Settings persist
// across processes in a state file, like the real driver keeps a power limit after its caller exits.
//
// A C library's state is process-global by nature (nvmlInit/nvmlShutdown reference counting), so this
// file keeps one Driver object behind a mutex; nothing else in wattwise does this.

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "fake_config.hpp"
#include "fake_model.hpp"
#include "fake_state.hpp"
#include "hw/nvml_abi.hpp"

using namespace wattwise::nvml_abi;
using namespace wattwise::fake_nvml;

namespace wattwise::nvml_abi {
struct nvmlDevice_st {
  unsigned index;
};
}  // namespace wattwise::nvml_abi

namespace {

struct Driver {
  std::mutex mutex;
  int init_count = 0;
  FakeConfig config;
  std::vector<nvmlDevice_st> devices;
  double init_time_s = 0;
  std::uint64_t config_generation = 0;  // bumped by each load of the config: drops the cached state
  std::int64_t realtime_minus_monotonic_us = 0;
};

Driver& driver() {
  static Driver instance;
  return instance;
}

nvmlReturn_t parse_error(const std::string& name) {
  static const std::map<std::string, nvmlReturn_t> codes = {
      {"DRIVER_NOT_LOADED", NVML_ERROR_DRIVER_NOT_LOADED},
      {"LIB_RM_VERSION_MISMATCH", NVML_ERROR_LIB_RM_VERSION_MISMATCH},
      {"NO_PERMISSION", NVML_ERROR_NO_PERMISSION},
      {"NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED},
      {"GPU_IS_LOST", NVML_ERROR_GPU_IS_LOST},
      {"INVALID_ARGUMENT", NVML_ERROR_INVALID_ARGUMENT},
      {"UNKNOWN", NVML_ERROR_UNKNOWN},
      {"TIMEOUT", NVML_ERROR_TIMEOUT},
  };
  const auto found = codes.find(name);
  return found == codes.end() ? NVML_ERROR_UNKNOWN : found->second;
}

std::int64_t realtime_minus_monotonic_us() {
  timespec real{}, mono{};
  clock_gettime(CLOCK_REALTIME, &real);
  clock_gettime(CLOCK_MONOTONIC, &mono);
  return (static_cast<std::int64_t>(real.tv_sec) - mono.tv_sec) * 1000000 +
         (real.tv_nsec - mono.tv_nsec) / 1000;
}

// Fault injection ("errors" in a GPU's config): a seeded draw per matching call. One generator per GPU,
// behind its own lock, because wattwise's sampling threads call in concurrently.
nvmlReturn_t injected_error(unsigned index, const FakeGpuConfig& gpu, const char* call, double since_init_s) {
  if (!gpu.errors || !gpu.errors->applies_to(call, since_init_s)) return NVML_SUCCESS;
  static std::mutex mutex;
  static std::map<unsigned, std::mt19937> generators;
  std::lock_guard lock(mutex);
  auto found = generators.find(index);
  if (found == generators.end())
    found = generators.emplace(index, std::mt19937(gpu.errors->seed + index)).first;
  std::uniform_real_distribution<double> draw(0, 1);
  if (draw(found->second) >= gpu.errors->rate) return NVML_SUCCESS;
  std::uniform_int_distribution<std::size_t> pick(0, gpu.errors->codes.size() - 1);
  return parse_error(gpu.errors->codes[pick(found->second)]);
}

double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// The real driver spins inside some calls (an energy read costs ~3.97 ms of CPU on an H100): burn the
// configured CPU time on the calling thread, not wall time, so getrusage sees what it would see there.
void burn_cpu_us(double cost_us) {
  if (cost_us <= 0) return;
  const double until_us = thread_cpu_us() + cost_us;
  while (thread_cpu_us() < until_us) {
  }
}

// A configured hang ("hang" in a GPU's config): the matching call never returns. Counted per GPU and per
// process, like the errors' draws.
void hang_if_due(unsigned index, const FakeGpuConfig& gpu, const char* call, double since_init_s) {
  if (!gpu.hang || !gpu.hang->matches(call)) return;
  static std::mutex mutex;
  static std::map<unsigned, unsigned> calls;
  unsigned nth = 0;
  {
    std::lock_guard lock(mutex);
    nth = ++calls[index];
  }
  const bool by_count = gpu.hang->after_calls && nth >= *gpu.hang->after_calls;
  const bool by_time = gpu.hang->after_s && since_init_s >= *gpu.hang->after_s;
  const bool always = !gpu.hang->after_calls && !gpu.hang->after_s;
  if (!(by_count || by_time || always)) return;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  while (true) std::this_thread::sleep_for(std::chrono::hours(24));
}

// Common checks of every device call: initialised, valid handle, GPU not lost, call supported; and the
// call's configured CPU cost, burnt first (a failing call on the real driver costs its time too).
nvmlReturn_t enter(nvmlDevice_t device, const char* call, const FakeGpuConfig** gpu) {
  Driver& d = driver();
  if (d.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || device->index >= d.config.gpus.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *gpu = &d.config.gpus[device->index];
  burn_cpu_us((*gpu)->cost_us(call, d.config.call_cost_us));
  hang_if_due(device->index, **gpu, call, monotonic_now_s() - d.init_time_s);
  if ((*gpu)->lost_after_s && monotonic_now_s() - d.init_time_s >= *(*gpu)->lost_after_s) {
    return NVML_ERROR_GPU_IS_LOST;
  }
  if ((*gpu)->lost_while_file_exists && ::access((*gpu)->lost_while_file_exists->c_str(), F_OK) == 0)
    return NVML_ERROR_GPU_IS_LOST;
  if ((*gpu)->is_unsupported(call)) return NVML_ERROR_NOT_SUPPORTED;
  return injected_error(device->index, **gpu, call, monotonic_now_s() - d.init_time_s);
}

nvmlReturn_t enter_control(nvmlDevice_t device, const char* call, const FakeGpuConfig** gpu) {
  if (nvmlReturn_t result = enter(device, call, gpu); result != NVML_SUCCESS) return result;
  if (driver().config.controls_error) return parse_error(*driver().config.controls_error);
  return NVML_SUCCESS;
}

// The state file as last read, reread only when stat says it was replaced (writes rename a new file into
// place, so the inode changes): the fake's own bookkeeping then costs a stat per call, not a locked read
// and a JSON parse, and the CPU benchmark measures the burnt call costs rather than the fake.
FakeState current_state() {
  static std::mutex mutex;
  static std::optional<FakeState> cached;
  static struct stat cached_stat {};
  static std::uint64_t cached_generation = 0;  // a new nvmlInit may load another config
  struct stat now {};
  const bool exists = ::stat(driver().config.state_file.c_str(), &now) == 0;
  if (!exists) now = {};
  std::lock_guard lock(mutex);
  const bool same = cached && cached_generation == driver().config_generation &&
                    now.st_ino == cached_stat.st_ino && now.st_size == cached_stat.st_size &&
                    now.st_mtim.tv_sec == cached_stat.st_mtim.tv_sec &&
                    now.st_mtim.tv_nsec == cached_stat.st_mtim.tv_nsec;
  if (!same) {
    cached = read_fake_state(driver().config);
    cached_stat = now;
    cached_generation = driver().config_generation;
  }
  return *cached;
}

FakeGpuModel model_of(const FakeGpuConfig& gpu) {
  return FakeGpuModel(gpu, current_state()[gpu.uuid]);
}

nvmlReturn_t copy_string(const std::string& text, char* out, unsigned int length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t copy_list(const std::vector<unsigned>& values, unsigned int* count, unsigned int* out) {
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (*count < values.size() || out == nullptr) {
    *count = static_cast<unsigned int>(values.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(values.begin(), values.end(), out);
  *count = static_cast<unsigned int>(values.size());
  return NVML_SUCCESS;
}

unsigned int to_mw(double watts) {
  return static_cast<unsigned int>(std::lround(watts * 1000.0));
}

}  // namespace

extern "C" {

#define WATTWISE_FAKE_DECLARE(name, params) __attribute__((visibility("default"))) nvmlReturn_t name params;
WATTWISE_NVML_FUNCTIONS(WATTWISE_FAKE_DECLARE)
#undef WATTWISE_FAKE_DECLARE

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "Driver/library version mismatch";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    default:
      return "Unknown Error";
  }
}

nvmlReturn_t nvmlInit_v2(void) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (d.init_count == 0) {
    const std::string path = fake_config_path_from_env();
    if (path.empty()) {
      std::fprintf(stderr, "fake NVML: set WATTWISE_FAKE_NVML_CONFIG to a config file\n");
      return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    try {
      d.config = load_fake_config(path);
      ++d.config_generation;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return NVML_ERROR_UNKNOWN;
    }
    if (d.config.init_error) return parse_error(*d.config.init_error);
    d.devices.clear();
    for (unsigned i = 0; i < d.config.gpus.size(); ++i) d.devices.push_back({i});
    d.init_time_s = monotonic_now_s();
    d.realtime_minus_monotonic_us = realtime_minus_monotonic_us();
  }
  ++d.init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  Driver& d = driver();
  std::lock_guard lock(d.mutex);
  if (d.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --d.init_count;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (driver().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  return copy_string(driver().config.driver_version, version, length);
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* device_count) {
  if (driver().init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device_count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device_count = static_cast<unsigned int>(driver().devices.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  Driver& d = driver();
  if (d.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= d.devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &d.devices[index];
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  return copy_string(gpu->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  return copy_string(gpu->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pci = nvmlPciInfo_t{};
  std::snprintf(pci->busId, sizeof(pci->busId), "%s", gpu->pci_bus_id.c_str());
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s", gpu->pci_bus_id.substr(4).c_str());
  pci->pciDeviceId = 0x233010DE;
  return NVML_SUCCESS;
}

#ifndef WATTWISE_FAKE_NVML_OLD_DRIVER
// Older drivers lack these two: the "old" variant of the fake leaves them out to test that path.
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* energy) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (energy == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const double delay_ms = driver().config.energy_read_delay_ms;
  if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(delay_ms));
  *energy = model_of(*gpu).counter_mj(monotonic_now_s());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                  unsigned long long last_seen_us, nvmlValueType_t* value_type,
                                  unsigned int* count, nvmlSample_t* samples) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (type != NVML_TOTAL_POWER_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
  if (value_type == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::int64_t offset_us = driver().realtime_minus_monotonic_us;
  std::vector<nvmlSample_t> fresh;
  for (const FakeSample& s : model_of(*gpu).buffered_samples(monotonic_now_s())) {
    const auto stamp_us = static_cast<unsigned long long>(s.monotonic_us + offset_us);
    if (stamp_us <= last_seen_us) continue;
    nvmlSample_t sample{};
    sample.timeStamp = stamp_us;
    sample.sampleValue.uiVal = to_mw(s.power_w);
    fresh.push_back(sample);
  }
  if (fresh.empty()) return NVML_ERROR_NOT_FOUND;
  *value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
  if (samples == nullptr) {
    *count = static_cast<unsigned int>(fresh.size());
    return NVML_SUCCESS;
  }
  const std::size_t n = std::min<std::size_t>(*count, fresh.size());
  std::copy(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(n), samples);
  *count = static_cast<unsigned int>(n);
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (power == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *power = to_mw(model_of(*gpu).average_power_w(monotonic_now_s()));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (values == nullptr || count < 0) return NVML_ERROR_INVALID_ARGUMENT;
  const double now_s = monotonic_now_s();
  const FakeGpuModel model = model_of(*gpu);
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& field = values[i];
    field.timestamp = static_cast<long long>(now_s * 1e6) + driver().realtime_minus_monotonic_us;
    field.latencyUsec = 0;
    field.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
    field.nvmlReturn = NVML_SUCCESS;
    if (field.fieldId == NVML_FI_DEV_POWER_INSTANT && !gpu->is_unsupported("NVML_FI_DEV_POWER_INSTANT")) {
      field.value.uiVal = to_mw(model.instant_power_w(now_s));
    } else if (field.fieldId == NVML_FI_DEV_POWER_AVERAGE) {
      field.value.uiVal = to_mw(model.average_power_w(now_s));
    } else {
      field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const FakeGpuSettings settings = current_state()[gpu->uuid];
  const auto highest = [](const std::vector<unsigned>& v) {
    return v.empty() ? 0u : *std::max_element(v.begin(), v.end());
  };
  if (type == NVML_CLOCK_MEM) {
    *clock = settings.mem_lock_mhz ? settings.mem_lock_mhz->second : highest(gpu->mem_clocks_mhz);
  } else {
    *clock = settings.sm_lock_mhz ? settings.sm_lock_mhz->second : highest(gpu->sm_clocks_mhz);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const double share = model_of(*gpu).power_now_w(monotonic_now_s()) / gpu->max_limit_w;
  utilization->gpu = static_cast<unsigned int>(std::lround(std::min(1.0, share) * 100));
  utilization->memory = utilization->gpu / 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t, unsigned int* temp) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (temp == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = static_cast<unsigned int>(30 + std::lround(model_of(*gpu).power_now_w(monotonic_now_s()) / 20));
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t* pstate) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (pstate == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *pstate = NVML_PSTATE_0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const double now_s = monotonic_now_s();
  const FakeGpuModel model = model_of(*gpu);
  *reasons = gpu->profile.power_w(now_s) > model.limit_w() ? nvmlClocksEventReasonSwPowerCap : 0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(device, reasons);
}

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter,
                                         unsigned int* value) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (value == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *value = counter == NVML_PCIE_UTIL_TX_BYTES ? gpu->pcie_tx_kbps : gpu->pcie_rx_kbps;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  constexpr double kBytesPerMib = 1024.0 * 1024.0;
  memory->total = static_cast<unsigned long long>(gpu->memory_total_mib * kBytesPerMib);
  memory->used = static_cast<unsigned long long>(gpu->memory_used_mib * kBytesPerMib);
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}

#ifndef WATTWISE_FAKE_NVML_OLD_DRIVER
// Older drivers lack the _v3 symbol: the "old" fake leaves it out.
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::vector<unsigned int> pids;
  if (gpu->compute_pids_file) {
    std::ifstream in(*gpu->compute_pids_file);
    for (unsigned int pid = 0; in >> pid;) pids.push_back(pid);
  }
  // As NVML: too small a buffer gets the size needed and INSUFFICIENT_SIZE.
  if (infos == nullptr || *count < pids.size()) {
    *count = static_cast<unsigned int>(pids.size());
    return pids.empty() ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = static_cast<unsigned int>(pids.size());
  for (std::size_t i = 0; i < pids.size(); ++i) {
    infos[i] = {};
    infos[i].pid = pids[i];
    infos[i].usedGpuMemory = 512ULL * 1024 * 1024;
    infos[i].gpuInstanceId = infos[i].computeInstanceId = 0xFFFFFFFFu;
  }
  return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t device, unsigned int* min_mw,
                                                          unsigned int* max_mw) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (min_mw == nullptr || max_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *min_mw = to_mw(gpu->min_limit_w);
  *max_mw = to_mw(gpu->max_limit_w);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t device, unsigned int* limit_mw) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit_mw = to_mw(gpu->default_limit_w);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t device, unsigned int* limit_mw) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit_mw = current_state()[gpu->uuid].power_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit_mw) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  if (limit_mw == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit_mw = current_state()[gpu->uuid].power_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t device, unsigned int limit_mw) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter_control(device, __func__, &gpu)) return r;
  if (gpu->set_power_limit_error) return parse_error(*gpu->set_power_limit_error);
  if (limit_mw < to_mw(gpu->min_limit_w) || limit_mw > to_mw(gpu->max_limit_w))
    return NVML_ERROR_INVALID_ARGUMENT;
  update_fake_state(driver().config, [&](FakeState& state) {
    FakeGpuSettings& settings = state[gpu->uuid];
    // Re-anchor the energy counter so it stays continuous and monotone across the change.
    const double now_s = monotonic_now_s();
    settings.anchor_energy_j = FakeGpuModel(*gpu, settings).energy_j(now_s);
    settings.anchor_time_s = now_s;
    settings.power_limit_mw = limit_mw;
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count,
                                                unsigned int* clocks) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  return copy_list(gpu->mem_clocks_mhz, count, clocks);
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t device, unsigned int mem_clock_mhz,
                                                  unsigned int* count, unsigned int* clocks) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter(device, __func__, &gpu)) return r;
  const auto& mems = gpu->mem_clocks_mhz;
  if (std::find(mems.begin(), mems.end(), mem_clock_mhz) == mems.end()) return NVML_ERROR_NOT_FOUND;
  return copy_list(gpu->sm_clocks_mhz, count, clocks);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t device, unsigned int min_mhz, unsigned int max_mhz) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter_control(device, __func__, &gpu)) return r;
  if (min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  update_fake_state(driver().config, [&](FakeState& state) {
    state[gpu->uuid].sm_lock_mhz = {{min_mhz, max_mhz}};
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t device) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter_control(device, __func__, &gpu)) return r;
  update_fake_state(driver().config, [&](FakeState& state) { state[gpu->uuid].sm_lock_mhz.reset(); });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetMemoryLockedClocks(nvmlDevice_t device, unsigned int min_mhz,
                                             unsigned int max_mhz) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter_control(device, __func__, &gpu)) return r;
  if (min_mhz > max_mhz) return NVML_ERROR_INVALID_ARGUMENT;
  update_fake_state(driver().config, [&](FakeState& state) {
    state[gpu->uuid].mem_lock_mhz = {{min_mhz, max_mhz}};
  });
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetMemoryLockedClocks(nvmlDevice_t device) {
  const FakeGpuConfig* gpu = nullptr;
  if (nvmlReturn_t r = enter_control(device, __func__, &gpu)) return r;
  update_fake_state(driver().config, [&](FakeState& state) { state[gpu->uuid].mem_lock_mhz.reset(); });
  return NVML_SUCCESS;
}

}  // extern "C"
