// libwattwise-nvtx.so: the NVTX injection library. `wattwise measure --nvtx` points NVTX_INJECTION64_PATH
// at it; the job's NVTX runtime loads it on the job's first NVTX call and calls InitializeInjectionNvtx2
// (nvtx_abi.hpp describes the protocol). It fills the range and mark slots of the default domain (CORE) and
// the domain slots (CORE2) with the functions below, which hand every call to one RangeTracker whose phases
// go out through the C marker client (linked in statically, its symbols hidden).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "nvtx/nvtx_abi.hpp"
#include "nvtx/range_tracker.hpp"
#include "wattwise/markers.h"

namespace {

using namespace wattwise::nvtx_abi;
using wattwise::nvtx::RangeTracker;

class ClientSink final : public wattwise::nvtx::MarkerSink {
 public:
  void begin(const std::string& name) override { ww_begin(name.c_str()); }
  void end(const std::string& name) override { ww_end(name.c_str()); }
  void point(const std::string& name) override { ww_point(name.c_str()); }
};

void report_anomalies();

// The one tracker of this process. Process-wide because the NVTX callbacks carry no user data; created by the
// first InitializeInjectionNvtx2 (each copy of the NVTX runtime in the process calls it: libtorch and a CUDA
// library may each carry one) and never destroyed, since other threads may still call NVTX while the process
// exits (a destroyed tracker would be a use-after-free there).
RangeTracker& tracker() {
  static RangeTracker* const instance = [] {
    static ClientSink sink;
    auto* created =
        new RangeTracker(sink, wattwise::nvtx::parse_domain_filter(std::getenv("WATTWISE_NVTX_DOMAINS")));
    std::atexit(report_anomalies);
    return created;
  }();
  return *instance;
}

void MarkEx(const nvtxEventAttributes_t* a) {
  tracker().mark(nullptr, tracker().event_name(nullptr, a));
}
void MarkA(const char* m) {
  tracker().mark(nullptr, tracker().text_name(nullptr, m ? m : ""));
}
void MarkW(const wchar_t* m) {
  tracker().mark(nullptr, tracker().text_name(nullptr, wattwise::nvtx::utf8_from_wide(m)));
}
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) {
  return tracker().start(nullptr, tracker().event_name(nullptr, a));
}
nvtxRangeId_t RangeStartA(const char* m) {
  return tracker().start(nullptr, tracker().text_name(nullptr, m ? m : ""));
}
nvtxRangeId_t RangeStartW(const wchar_t* m) {
  return tracker().start(nullptr, tracker().text_name(nullptr, wattwise::nvtx::utf8_from_wide(m)));
}
void RangeEnd(nvtxRangeId_t id) {
  tracker().end(nullptr, id);
}
int RangePushEx(const nvtxEventAttributes_t* a) {
  return tracker().push(nullptr, tracker().event_name(nullptr, a));
}
int RangePushA(const char* m) {
  return tracker().push(nullptr, tracker().text_name(nullptr, m ? m : ""));
}
int RangePushW(const wchar_t* m) {
  return tracker().push(nullptr, tracker().text_name(nullptr, wattwise::nvtx::utf8_from_wide(m)));
}
int RangePop() {
  return tracker().pop(nullptr);
}

void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  tracker().mark(d, tracker().event_name(d, a));
}
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return tracker().start(d, tracker().event_name(d, a));
}
void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  tracker().end(d, id);
}
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return tracker().push(d, tracker().event_name(d, a));
}
int DomainRangePop(nvtxDomainHandle_t d) {
  return tracker().pop(d);
}
// Registered strings and domains must be ours: a slot left empty returns a null handle, and a named domain's
// null handle would read as the default domain.
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return tracker().register_string(s ? s : "");
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return tracker().register_string(wattwise::nvtx::utf8_from_wide(s));
}
nvtxDomainHandle_t DomainCreateA(const char* name) {
  return tracker().create_domain(name ? name : "");
}
nvtxDomainHandle_t DomainCreateW(const wchar_t* name) {
  return tracker().create_domain(wattwise::nvtx::utf8_from_wide(name));
}

template <typename F>
void install(NvtxFunctionTable table, unsigned slots, unsigned id, F function) {
  // A runtime older than these headers has fewer slots: leave the missing ones alone.
  if (table != nullptr && id < slots && table[id] != nullptr)
    *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

bool install_core(const NvtxExportTableCallbacks& callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (callbacks.GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) == 0 || t == nullptr) return false;
  install(t, n, NVTX_CBID_CORE_MarkEx, &MarkEx);
  install(t, n, NVTX_CBID_CORE_MarkA, &MarkA);
  install(t, n, NVTX_CBID_CORE_MarkW, &MarkW);
  install(t, n, NVTX_CBID_CORE_RangeStartEx, &RangeStartEx);
  install(t, n, NVTX_CBID_CORE_RangeStartA, &RangeStartA);
  install(t, n, NVTX_CBID_CORE_RangeStartW, &RangeStartW);
  install(t, n, NVTX_CBID_CORE_RangeEnd, &RangeEnd);
  install(t, n, NVTX_CBID_CORE_RangePushEx, &RangePushEx);
  install(t, n, NVTX_CBID_CORE_RangePushA, &RangePushA);
  install(t, n, NVTX_CBID_CORE_RangePushW, &RangePushW);
  install(t, n, NVTX_CBID_CORE_RangePop, &RangePop);
  return true;
}

void install_core2(const NvtxExportTableCallbacks& callbacks) {
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (callbacks.GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) == 0 || t == nullptr) return;
  install(t, n, NVTX_CBID_CORE2_DomainMarkEx, &DomainMarkEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &DomainRangeStartEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &DomainRangeEnd);
  install(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &DomainRangePushEx);
  install(t, n, NVTX_CBID_CORE2_DomainRangePop, &DomainRangePop);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &DomainRegisterStringA);
  install(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, &DomainRegisterStringW);
  install(t, n, NVTX_CBID_CORE2_DomainCreateA, &DomainCreateA);
  install(t, n, NVTX_CBID_CORE2_DomainCreateW, &DomainCreateW);
}

// What could not become a phase is said once, on the job's stderr, when it exits.
void report_anomalies() {
  const auto a = tracker().anomalies();
  if (a.pops_without_push > 0)
    std::fprintf(stderr,
                 "wattwise nvtx: %llu range pop(s) found no range open on their thread (NVTX push/pop ranges "
                 "belong to the thread that pushed them; nvtxRangeStart/End may cross threads)\n",
                 static_cast<unsigned long long>(a.pops_without_push));
  if (a.ends_of_unknown_id > 0)
    std::fprintf(stderr, "wattwise nvtx: %llu range end(s) named no open range\n",
                 static_cast<unsigned long long>(a.ends_of_unknown_id));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_table) {
  // Outside wattwise (no WATTWISE_SOCKET) there is nowhere to send phases: decline, and NVTX turns every
  // call into a no-op, the cheapest state for the job.
  if (get_table == nullptr || ww_enabled() == 0) return 0;
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
      callbacks->GetModuleFunctionTable == nullptr)
    return 0;
  tracker();  // before any slot is filled, so no callback can come first
  if (!install_core(*callbacks)) return 0;
  install_core2(*callbacks);
  const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr)
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  return 1;
}
