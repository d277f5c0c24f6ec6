#pragma once

// Our own declaration of the part of the NVTX v3 C ABI that wattwise's injection library uses, written from
// NVIDIA's documented headers (NVIDIA/NVTX: nvToolsExt.h and nvtxDetail/nvtxTypes.h, nvtxImpl.h, nvtxInit.h).
// Debian has no nvtx3 headers (a CUDA toolkit does), and the library is loaded by whatever copy of NVTX the
// job was built with, so these layouts and values must match NVIDIA's exactly: tools/gpu/nvtx_abi_check
// compares them with the real headers (the test nvtx_abi_check where CMake finds them, and on the GPU
// machine), as tools/gpu/abi_check does for NVML.
//
// The loading protocol (nvtxInit.h, load sequence 1 and 2): on the first NVTX call, the runtime reads the
// environment variable NVTX_INJECTION64_PATH, dlopens that path, looks up InitializeInjectionNvtx2 and calls
// it with its nvtxGetExportTable. The injection asks for the callbacks table (NVTX_ETID_CALLBACKS), asks it
// for each module's function table and writes its own functions into the slots it wants; it returns non-zero
// for success. Slots left alone become no-ops, so an API call with no callback installed returns 0 (a null
// handle).
//
// The test loader (tests/nvtx/fake_nvtx_loader.cpp) plays the runtime's side from this same header.

#include <cstddef>
#include <cstdint>

namespace wattwise::nvtx_abi {

// NVTX_VERSION of the headers this describes; a runtime reports its own in the version-info table.
inline constexpr uint32_t NVTX_VERSION = 3;

typedef uint64_t nvtxRangeId_t;
typedef struct nvtxDomainRegistration_st* nvtxDomainHandle_t;
typedef struct nvtxStringRegistration_st* nvtxStringHandle_t;

typedef enum nvtxMessageType_t {
  NVTX_MESSAGE_UNKNOWN = 0,
  NVTX_MESSAGE_TYPE_ASCII = 1,
  NVTX_MESSAGE_TYPE_UNICODE = 2,
  NVTX_MESSAGE_TYPE_REGISTERED = 3,
} nvtxMessageType_t;

typedef union nvtxMessageValue_t {
  const char* ascii;
  const wchar_t* unicode;
  nvtxStringHandle_t registered;
} nvtxMessageValue_t;

typedef enum nvtxPayloadType_t {
  NVTX_PAYLOAD_UNKNOWN = 0,
  NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 = 1,
  NVTX_PAYLOAD_TYPE_INT64 = 2,
  NVTX_PAYLOAD_TYPE_DOUBLE = 3,
  NVTX_PAYLOAD_TYPE_UNSIGNED_INT32 = 4,
  NVTX_PAYLOAD_TYPE_INT32 = 5,
  NVTX_PAYLOAD_TYPE_FLOAT = 6,
} nvtxPayloadType_t;

// nvtxEventAttributes_v2 (nvtxEventAttributes_t): callers zero it and set version and size; a field beyond
// `size` was not given by the caller.
typedef struct nvtxEventAttributes_v2 {
  uint16_t version;
  uint16_t size;
  uint32_t category;
  int32_t colorType;
  uint32_t color;
  int32_t payloadType;
  int32_t reserved0;
  union payload_t {
    uint64_t ullValue;
    int64_t llValue;
    double dValue;
    uint32_t uiValue;
    int32_t iValue;
    float fValue;
  } payload;
  int32_t messageType;
  nvtxMessageValue_t message;
} nvtxEventAttributes_v2;
typedef nvtxEventAttributes_v2 nvtxEventAttributes_t;

// The export tables the runtime hands out (nvtxTypes.h).
typedef enum NvtxExportTableID {
  NVTX_ETID_INVALID = 0,
  NVTX_ETID_CALLBACKS = 1,
  NVTX_ETID_RESERVED0 = 2,
  NVTX_ETID_VERSIONINFO = 3,
} NvtxExportTableID;

typedef enum NvtxCallbackModule {
  NVTX_CB_MODULE_INVALID = 0,
  NVTX_CB_MODULE_CORE = 1,
  NVTX_CB_MODULE_CUDA = 2,
  NVTX_CB_MODULE_OPENCL = 3,
  NVTX_CB_MODULE_CUDART = 4,
  NVTX_CB_MODULE_CORE2 = 5,
  NVTX_CB_MODULE_SYNC = 6,
} NvtxCallbackModule;

// Slots of the CORE module (the default domain's API).
typedef enum NvtxCallbackIdCore {
  NVTX_CBID_CORE_INVALID = 0,
  NVTX_CBID_CORE_MarkEx = 1,
  NVTX_CBID_CORE_MarkA = 2,
  NVTX_CBID_CORE_MarkW = 3,
  NVTX_CBID_CORE_RangeStartEx = 4,
  NVTX_CBID_CORE_RangeStartA = 5,
  NVTX_CBID_CORE_RangeStartW = 6,
  NVTX_CBID_CORE_RangeEnd = 7,
  NVTX_CBID_CORE_RangePushEx = 8,
  NVTX_CBID_CORE_RangePushA = 9,
  NVTX_CBID_CORE_RangePushW = 10,
  NVTX_CBID_CORE_RangePop = 11,
  NVTX_CBID_CORE_NameCategoryA = 12,
  NVTX_CBID_CORE_NameCategoryW = 13,
  NVTX_CBID_CORE_NameOsThreadA = 14,
  NVTX_CBID_CORE_NameOsThreadW = 15,
  NVTX_CBID_CORE_SIZE = 16,
} NvtxCallbackIdCore;

// Slots of the CORE2 module (domains and registered strings).
typedef enum NvtxCallbackIdCore2 {
  NVTX_CBID_CORE2_INVALID = 0,
  NVTX_CBID_CORE2_DomainMarkEx = 1,
  NVTX_CBID_CORE2_DomainRangeStartEx = 2,
  NVTX_CBID_CORE2_DomainRangeEnd = 3,
  NVTX_CBID_CORE2_DomainRangePushEx = 4,
  NVTX_CBID_CORE2_DomainRangePop = 5,
  NVTX_CBID_CORE2_DomainResourceCreate = 6,
  NVTX_CBID_CORE2_DomainResourceDestroy = 7,
  NVTX_CBID_CORE2_DomainNameCategoryA = 8,
  NVTX_CBID_CORE2_DomainNameCategoryW = 9,
  NVTX_CBID_CORE2_DomainRegisterStringA = 10,
  NVTX_CBID_CORE2_DomainRegisterStringW = 11,
  NVTX_CBID_CORE2_DomainCreateA = 12,
  NVTX_CBID_CORE2_DomainCreateW = 13,
  NVTX_CBID_CORE2_DomainDestroy = 14,
  NVTX_CBID_CORE2_Initialize = 15,
  NVTX_CBID_CORE2_SIZE = 16,
} NvtxCallbackIdCore2;

// A slot holds a function pointer of the API function's own type; the table is an array of pointers to
// slots ("double pointer because array of pointers to function pointers", nvtxTypes.h). Index 0 is unused.
typedef void (*NvtxFunctionPointer)(void);
typedef NvtxFunctionPointer** NvtxFunctionTable;

typedef const void* (*NvtxGetExportTableFunc_t)(uint32_t exportTableId);
typedef int (*NvtxInitializeInjectionNvtxFunc_t)(NvtxGetExportTableFunc_t exportTable);

typedef struct NvtxExportTableCallbacks {
  size_t struct_size;
  // Returns non-zero when the module is known; *out_size is the number of slots (index 0 included).
  int (*GetModuleFunctionTable)(NvtxCallbackModule module, NvtxFunctionTable* out_table,
                                unsigned int* out_size);
} NvtxExportTableCallbacks;

typedef struct NvtxExportTableVersionInfo {
  size_t struct_size;
  uint32_t version;  // the NVTX_VERSION of the runtime the job linked
  uint32_t reserved0;
  void (*SetInjectionNvtxVersion)(uint32_t version);
} NvtxExportTableVersionInfo;

// The types of the slots wattwise fills (nvtxTypes.h, *_impl_fntype).
typedef void (*nvtxMarkEx_impl_fntype)(const nvtxEventAttributes_t* eventAttrib);
typedef void (*nvtxMarkA_impl_fntype)(const char* message);
typedef void (*nvtxMarkW_impl_fntype)(const wchar_t* message);
typedef nvtxRangeId_t (*nvtxRangeStartEx_impl_fntype)(const nvtxEventAttributes_t* eventAttrib);
typedef nvtxRangeId_t (*nvtxRangeStartA_impl_fntype)(const char* message);
typedef nvtxRangeId_t (*nvtxRangeStartW_impl_fntype)(const wchar_t* message);
typedef void (*nvtxRangeEnd_impl_fntype)(nvtxRangeId_t id);
typedef int (*nvtxRangePushEx_impl_fntype)(const nvtxEventAttributes_t* eventAttrib);
typedef int (*nvtxRangePushA_impl_fntype)(const char* message);
typedef int (*nvtxRangePushW_impl_fntype)(const wchar_t* message);
typedef int (*nvtxRangePop_impl_fntype)(void);
typedef void (*nvtxDomainMarkEx_impl_fntype)(nvtxDomainHandle_t domain,
                                             const nvtxEventAttributes_t* eventAttrib);
typedef nvtxRangeId_t (*nvtxDomainRangeStartEx_impl_fntype)(nvtxDomainHandle_t domain,
                                                            const nvtxEventAttributes_t* eventAttrib);
typedef void (*nvtxDomainRangeEnd_impl_fntype)(nvtxDomainHandle_t domain, nvtxRangeId_t id);
typedef int (*nvtxDomainRangePushEx_impl_fntype)(nvtxDomainHandle_t domain,
                                                 const nvtxEventAttributes_t* eventAttrib);
typedef int (*nvtxDomainRangePop_impl_fntype)(nvtxDomainHandle_t domain);
typedef nvtxStringHandle_t (*nvtxDomainRegisterStringA_impl_fntype)(nvtxDomainHandle_t domain,
                                                                    const char* string);
typedef nvtxStringHandle_t (*nvtxDomainRegisterStringW_impl_fntype)(nvtxDomainHandle_t domain,
                                                                    const wchar_t* string);
typedef nvtxDomainHandle_t (*nvtxDomainCreateA_impl_fntype)(const char* name);
typedef nvtxDomainHandle_t (*nvtxDomainCreateW_impl_fntype)(const wchar_t* name);
typedef void (*nvtxDomainDestroy_impl_fntype)(nvtxDomainHandle_t domain);

// The layout the documentation implies on LP64 Linux (the only platform wattwise runs on).
static_assert(sizeof(nvtxEventAttributes_v2) == 48);
static_assert(offsetof(nvtxEventAttributes_v2, payload) == 24);
static_assert(offsetof(nvtxEventAttributes_v2, messageType) == 32);
static_assert(offsetof(nvtxEventAttributes_v2, message) == 40);
static_assert(sizeof(NvtxExportTableCallbacks) == 16);
static_assert(sizeof(NvtxExportTableVersionInfo) == 24);
static_assert(sizeof(wchar_t) == 4, "NVTX's wide strings are UTF-32 here");

}  // namespace wattwise::nvtx_abi
