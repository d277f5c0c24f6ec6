#pragma once

// Our own declaration of the part of NVML's C ABI that wattwise uses, written from NVIDIA's documented API
// (NVML API Reference). There is no nvml.h on the build machines, and the library is dlopen'd, so these
// types and enum values must match the driver's binary interface exactly: a wrong struct layout corrupts
// memory on a real GPU. The static_asserts at the end pin the sizes that the documentation implies.
//
// Both the loader (nvml_library.cpp) and the fake driver used by the tests (tests/fake_nvml) are built from
// this one list, so the fake cannot drift from what the loader calls.

#include <cstddef>

namespace wattwise::nvml_abi {

typedef struct nvmlDevice_st* nvmlDevice_t;

// Return codes (nvmlReturn_t). The values are part of the ABI.
typedef enum nvmlReturn_enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_ALREADY_INITIALIZED = 5,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_INSUFFICIENT_POWER = 8,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_IRQ_ISSUE = 11,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_CORRUPTED_INFOROM = 14,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_RESET_REQUIRED = 16,
  NVML_ERROR_OPERATING_SYSTEM = 17,
  NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
  NVML_ERROR_IN_USE = 19,
  NVML_ERROR_MEMORY = 20,
  NVML_ERROR_NO_DATA = 21,
  NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22,
  NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
  NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
  NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_ERROR_DEPRECATED = 26,
  NVML_ERROR_NOT_READY = 27,
  NVML_ERROR_GPU_NOT_FOUND = 28,
  NVML_ERROR_INVALID_STATE = 29,
  NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

// Which member of nvmlValue_t holds the value.
typedef enum nvmlValueType_enum {
  NVML_VALUE_TYPE_DOUBLE = 0,
  NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  NVML_VALUE_TYPE_SIGNED_INT = 5,
  NVML_VALUE_TYPE_UNSIGNED_SHORT = 6
} nvmlValueType_t;

typedef union nvmlValue_st {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
} nvmlValue_t;

// One buffered sample of nvmlDeviceGetSamples; timeStamp is CPU wall-clock time in microseconds.
typedef struct nvmlSample_st {
  unsigned long long timeStamp;
  nvmlValue_t sampleValue;
} nvmlSample_t;

typedef enum nvmlSamplingType_enum {
  NVML_TOTAL_POWER_SAMPLES = 0,
  NVML_GPU_UTILIZATION_SAMPLES = 1,
  NVML_MEMORY_UTILIZATION_SAMPLES = 2,
  NVML_ENC_UTILIZATION_SAMPLES = 3,
  NVML_DEC_UTILIZATION_SAMPLES = 4,
  NVML_PROCESSOR_CLK_SAMPLES = 5,
  NVML_MEMORY_CLK_SAMPLES = 6
} nvmlSamplingType_t;

// Field ids of nvmlDeviceGetFieldValues that we read (values in milliwatts).
constexpr unsigned int NVML_FI_DEV_POWER_AVERAGE = 185;
constexpr unsigned int NVML_FI_DEV_POWER_INSTANT = 186;

typedef struct nvmlFieldValue_st {
  unsigned int fieldId;       // set by the caller
  unsigned int scopeId;       // set by the caller (0 for device-wide fields)
  long long timestamp;        // CPU wall-clock time of the value, microseconds since 1970
  long long latencyUsec;      // how long the value took to update within NVML
  nvmlValueType_t valueType;  // which member of `value` is valid
  nvmlReturn_t nvmlReturn;    // per-field result; `value` is undefined unless NVML_SUCCESS
  nvmlValue_t value;
} nvmlFieldValue_t;

constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

typedef struct nvmlPciInfo_st {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;                        // combined 16-bit device id and 16-bit vendor id
  unsigned int pciSubSystemId;                     // 32-bit sub system device id
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "domain:bus:device.function"
} nvmlPciInfo_t;

typedef struct nvmlUtilization_st {
  unsigned int gpu;     // percent of time a kernel was running over the last sample period
  unsigned int memory;  // percent of time device memory was read or written
} nvmlUtilization_t;

typedef struct nvmlMemory_st {
  unsigned long long total;  // bytes
  unsigned long long free;   // bytes
  unsigned long long used;   // bytes
} nvmlMemory_t;

typedef enum nvmlClockType_enum {
  NVML_CLOCK_GRAPHICS = 0,
  NVML_CLOCK_SM = 1,
  NVML_CLOCK_MEM = 2,
  NVML_CLOCK_VIDEO = 3
} nvmlClockType_t;

typedef enum nvmlTemperatureSensors_enum { NVML_TEMPERATURE_GPU = 0 } nvmlTemperatureSensors_t;

typedef enum nvmlPstates_enum {
  NVML_PSTATE_0 = 0,
  NVML_PSTATE_15 = 15,
  NVML_PSTATE_UNKNOWN = 32
} nvmlPstates_t;

typedef enum nvmlPcieUtilCounter_enum {
  NVML_PCIE_UTIL_TX_BYTES = 0,
  NVML_PCIE_UTIL_RX_BYTES = 1
} nvmlPcieUtilCounter_t;

// Clocks-event (formerly "throttle") reason bits.
constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x1ULL;
constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x2ULL;
constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x4ULL;
constexpr unsigned long long nvmlClocksEventReasonHwSlowdown = 0x8ULL;
constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL;

// One process with a compute context on a GPU, as nvmlDeviceGetComputeRunningProcesses_v3 fills it (the
// layout NVIDIA's nvml.h names nvmlProcessInfo_t since driver R510; the _v1/_v2 symbols take other layouts
// and are not used). pid is as the driver sees it: in a container with its own pid namespace it can be the
// host's pid. On a GPU without MIG the two instance ids are 0xFFFFFFFF.
typedef struct nvmlProcessInfo_st {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlProcessInfo_t;

constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

// Every entry point we use that returns nvmlReturn_t: X(name, parameter list). Where NVIDIA's header maps
// the plain name to a versioned one (nvmlInit -> nvmlInit_v2, ...), we name the versioned symbol, because
// that is what the header would have linked against. Kept as one list so that the loader's function
// pointers and the fake driver's definitions are generated from the same text.
#define WATTWISE_NVML_FUNCTIONS(X)                                                                           \
  X(nvmlInit_v2, (void))                                                                                     \
  X(nvmlShutdown, (void))                                                                                    \
  X(nvmlSystemGetDriverVersion, (char* version, unsigned int length))                                        \
  X(nvmlDeviceGetCount_v2, (unsigned int* deviceCount))                                                      \
  X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t* device))                               \
  X(nvmlDeviceGetName, (nvmlDevice_t device, char* name, unsigned int length))                               \
  X(nvmlDeviceGetUUID, (nvmlDevice_t device, char* uuid, unsigned int length))                               \
  X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t device, nvmlPciInfo_t * pci))                                     \
  X(nvmlDeviceGetTotalEnergyConsumption, (nvmlDevice_t device, unsigned long long* energy))                  \
  X(nvmlDeviceGetPowerUsage, (nvmlDevice_t device, unsigned int* power))                                     \
  X(nvmlDeviceGetFieldValues, (nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values))              \
  X(nvmlDeviceGetSamples,                                                                                    \
    (nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeenTimeStamp,                     \
     nvmlValueType_t* sampleValType, unsigned int* sampleCount, nvmlSample_t* samples))                      \
  X(nvmlDeviceGetClockInfo, (nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock))                \
  X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t device, nvmlUtilization_t * utilization))                   \
  X(nvmlDeviceGetTemperature,                                                                                \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensorType, unsigned int* temp))                          \
  X(nvmlDeviceGetPerformanceState, (nvmlDevice_t device, nvmlPstates_t * pState))                            \
  X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlDevice_t device, unsigned long long* clocksEventReasons))   \
  X(nvmlDeviceGetCurrentClocksThrottleReasons,                                                               \
    (nvmlDevice_t device, unsigned long long* clocksThrottleReasons))                                        \
  X(nvmlDeviceGetPcieThroughput, (nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value))  \
  X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t device, nvmlMemory_t * memory))                                   \
  X(nvmlDeviceGetPowerManagementLimitConstraints,                                                            \
    (nvmlDevice_t device, unsigned int* minLimit, unsigned int* maxLimit))                                   \
  X(nvmlDeviceGetPowerManagementDefaultLimit, (nvmlDevice_t device, unsigned int* defaultLimit))             \
  X(nvmlDeviceGetPowerManagementLimit, (nvmlDevice_t device, unsigned int* limit))                           \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlDevice_t device, unsigned int* limit))                             \
  X(nvmlDeviceSetPowerManagementLimit, (nvmlDevice_t device, unsigned int limit))                            \
  X(nvmlDeviceGetSupportedMemoryClocks, (nvmlDevice_t device, unsigned int* count, unsigned int* clocksMHz)) \
  X(nvmlDeviceGetSupportedGraphicsClocks,                                                                    \
    (nvmlDevice_t device, unsigned int memoryClockMHz, unsigned int* count, unsigned int* clocksMHz))        \
  X(nvmlDeviceSetGpuLockedClocks,                                                                            \
    (nvmlDevice_t device, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz))                         \
  X(nvmlDeviceResetGpuLockedClocks, (nvmlDevice_t device))                                                   \
  X(nvmlDeviceSetMemoryLockedClocks,                                                                         \
    (nvmlDevice_t device, unsigned int minMemClockMHz, unsigned int maxMemClockMHz))                         \
  X(nvmlDeviceResetMemoryLockedClocks, (nvmlDevice_t device))                                                \
  X(nvmlDeviceGetComputeRunningProcesses_v3,                                                                 \
    (nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos))

// The one entry point that does not return nvmlReturn_t.
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t result);

static_assert(sizeof(nvmlValue_t) == 8, "nvmlValue_t is an 8-byte union");
static_assert(sizeof(nvmlSample_t) == 16, "nvmlSample_t layout");
static_assert(sizeof(nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");
static_assert(offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t layout");
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout");
static_assert(offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t layout");
static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t layout");
static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t layout");
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8, "nvmlProcessInfo_t layout");
static_assert(offsetof(nvmlProcessInfo_t, computeInstanceId) == 20, "nvmlProcessInfo_t layout");
static_assert(sizeof(nvmlReturn_t) == 4 && sizeof(nvmlValueType_t) == 4, "NVML enums are int-sized");

}  // namespace wattwise::nvml_abi
