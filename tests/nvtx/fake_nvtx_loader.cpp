// Plays the NVTX runtime's side of the injection protocol exactly as nvtxInit.h/nvtxImpl.h document it, from
// our own ABI header: on the first NVTX call it reads NVTX_INJECTION64_PATH, dlopens that path, looks up
// InitializeInjectionNvtx2 and calls it with a nvtxGetExportTable that hands out the CORE and CORE2 slot
// tables; a failed initialisation unloads the library and leaves every call a no-op. Then it makes the NVTX
// calls its arguments name, through the slots, as an instrumented program would.
//
//   fake_nvtx_loader [--expect-injection] OP...
//     push:NAME pushw:NAME pushex:NAME pushreg:NAME pop    push/pop ranges (A, W, Ex, registered string)
//     start:NAME end:NAME end-thread:NAME                  start/end ranges (ended here or on a new thread)
//     pop-thread                                           a pop on a new thread (NVTX: it pops that
//     thread's) mark:NAME  dpush:DOMAIN:NAME  dpop:DOMAIN             a mark; push/pop in a named domain
//     sleep:MS   repeat:N:OP,OP,...                         wait; repeat ops (no commas in names, no nesting)
//     rate:N[:B]                                            N push/pop pairs (B at a time, 1 ms apart);
//                                                           prints the time per pair as JSON on stdout
// --expect-injection: exit 3 if no injection attached (the variable unset, or the library declined).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "nvtx/nvtx_abi.hpp"

using namespace wattwise::nvtx_abi;

namespace {

// The runtime's globals (nvtxGlobals_t): one slot per API function, and per module a table of pointers to
// its slots with index 0 unused and a null after the last, as nvtxImpl.h lays them out.
struct Runtime {
  NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE] = {};
  NvtxFunctionPointer core2[NVTX_CBID_CORE2_SIZE] = {};
  NvtxFunctionPointer* core_table[NVTX_CBID_CORE_SIZE + 1] = {};
  NvtxFunctionPointer* core2_table[NVTX_CBID_CORE2_SIZE + 1] = {};
  bool initialised = false;
  bool attached = false;
};
Runtime g_runtime;

int get_module_function_table(NvtxCallbackModule module, NvtxFunctionTable* out_table, unsigned* out_size) {
  NvtxFunctionTable table = nullptr;
  unsigned slots = 0;
  if (module == NVTX_CB_MODULE_CORE) {
    table = g_runtime.core_table;
    slots = NVTX_CBID_CORE_SIZE;
  } else if (module == NVTX_CB_MODULE_CORE2) {
    table = g_runtime.core2_table;
    slots = NVTX_CBID_CORE2_SIZE;
  } else {
    return 0;
  }
  if (out_size != nullptr) *out_size = slots;
  if (out_table != nullptr) *out_table = table;
  return 1;
}

void set_injection_version(uint32_t) {}

const NvtxExportTableCallbacks kCallbacks = {sizeof(NvtxExportTableCallbacks), &get_module_function_table};
const NvtxExportTableVersionInfo kVersionInfo = {sizeof(NvtxExportTableVersionInfo), NVTX_VERSION, 0,
                                                 &set_injection_version};

const void* get_export_table(uint32_t id) {
  if (id == NVTX_ETID_CALLBACKS) return &kCallbacks;
  if (id == NVTX_ETID_VERSIONINFO) return &kVersionInfo;
  return nullptr;
}

void initialise() {
  if (g_runtime.initialised) return;
  g_runtime.initialised = true;
  for (unsigned i = 1; i < NVTX_CBID_CORE_SIZE; ++i) g_runtime.core_table[i] = &g_runtime.core[i];
  for (unsigned i = 1; i < NVTX_CBID_CORE2_SIZE; ++i) g_runtime.core2_table[i] = &g_runtime.core2[i];
  const char* path = std::getenv("NVTX_INJECTION64_PATH");
  if (path == nullptr) return;
  void* library = dlopen(path, RTLD_LAZY);
  if (library == nullptr) {
    std::fprintf(stderr, "fake_nvtx_loader: %s\n", dlerror());
    return;
  }
  auto init = reinterpret_cast<NvtxInitializeInjectionNvtxFunc_t>(dlsym(library, "InitializeInjectionNvtx2"));
  if (init != nullptr && init(&get_export_table) != 0) {
    g_runtime.attached = true;
    return;
  }
  // Roll back as the runtime does: every call becomes a no-op.
  for (auto& slot : g_runtime.core) slot = nullptr;
  for (auto& slot : g_runtime.core2) slot = nullptr;
  dlclose(library);
}

template <typename F>
F slot(const NvtxFunctionPointer* slots, unsigned id) {
  initialise();
  return reinterpret_cast<F>(slots[id]);
}
#define CORE(T, id) slot<T>(g_runtime.core, id)
#define CORE2(T, id) slot<T>(g_runtime.core2, id)

std::wstring wide(const std::string& utf8) {
  std::wstring out(utf8.size() + 1, L'\0');
  const std::size_t n = std::mbstowcs(out.data(), utf8.c_str(), out.size());
  if (n == static_cast<std::size_t>(-1)) {
    std::fprintf(stderr, "fake_nvtx_loader: not UTF-8: %s\n", utf8.c_str());
    std::exit(2);
  }
  out.resize(n);
  return out;
}

nvtxEventAttributes_t ascii_attributes(const char* text) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = sizeof(nvtxEventAttributes_t);
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = text;
  return a;
}

int push(const std::string& name) {
  auto f = CORE(nvtxRangePushA_impl_fntype, NVTX_CBID_CORE_RangePushA);
  return f ? f(name.c_str()) : 0;
}
int pop() {
  auto f = CORE(nvtxRangePop_impl_fntype, NVTX_CBID_CORE_RangePop);
  return f ? f() : 0;
}

// rate:N[:B]: N push/pop pairs of "r", back to back, or B at a time with a 1 ms pause between (not timed).
void rate(const std::string& arg) {
  const auto colon = arg.find(':');
  const long pairs = std::stol(arg.substr(0, colon));
  const long burst = colon == std::string::npos ? 0 : std::stol(arg.substr(colon + 1));
  push("warm-up");  // the first call loads the library
  pop();
  std::chrono::nanoseconds busy{0};
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) {
    push("r");
    pop();
    if (burst > 0 && (i + 1) % burst == 0) {
      busy += std::chrono::steady_clock::now() - t0;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      t0 = std::chrono::steady_clock::now();
    }
  }
  busy += std::chrono::steady_clock::now() - t0;
  std::printf("{\"pairs\": %ld, \"burst\": %ld, \"ns_per_pair\": %.0f}\n", pairs, burst,
              static_cast<double>(busy.count()) / static_cast<double>(pairs));
}

class Player {
 public:
  void run(const std::string& op);

 private:
  nvtxDomainHandle_t domain(const std::string& name);
  void run_two_part(const std::string& verb, const std::string& arg);
  bool run_range(const std::string& verb, const std::string& arg);  // false: not a range op

  std::map<std::string, nvtxRangeId_t> started_;
  std::map<std::string, nvtxDomainHandle_t> domains_;
};

nvtxDomainHandle_t Player::domain(const std::string& name) {
  auto found = domains_.find(name);
  if (found != domains_.end()) return found->second;
  auto create = CORE2(nvtxDomainCreateA_impl_fntype, NVTX_CBID_CORE2_DomainCreateA);
  return domains_[name] = create ? create(name.c_str()) : nullptr;
}

bool Player::run_range(const std::string& verb, const std::string& arg) {
  if (verb == "push") {
    push(arg);
  } else if (verb == "pushw") {
    auto f = CORE(nvtxRangePushW_impl_fntype, NVTX_CBID_CORE_RangePushW);
    if (f) f(wide(arg).c_str());
  } else if (verb == "pushex") {
    auto f = CORE(nvtxRangePushEx_impl_fntype, NVTX_CBID_CORE_RangePushEx);
    const auto a = ascii_attributes(arg.c_str());
    if (f) f(&a);
  } else if (verb == "pushreg") {
    auto reg = CORE2(nvtxDomainRegisterStringA_impl_fntype, NVTX_CBID_CORE2_DomainRegisterStringA);
    auto f = CORE(nvtxRangePushEx_impl_fntype, NVTX_CBID_CORE_RangePushEx);
    nvtxEventAttributes_t a = ascii_attributes(nullptr);
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = reg ? reg(nullptr, arg.c_str()) : nullptr;
    if (f) f(&a);
  } else if (verb == "start") {
    auto f = CORE(nvtxRangeStartA_impl_fntype, NVTX_CBID_CORE_RangeStartA);
    started_[arg] = f ? f(arg.c_str()) : 0;
  } else if (verb == "end" || verb == "end-thread") {
    auto f = CORE(nvtxRangeEnd_impl_fntype, NVTX_CBID_CORE_RangeEnd);
    const nvtxRangeId_t id = started_[arg];
    if (verb == "end" && f) f(id);
    if (verb == "end-thread" && f) std::thread([f, id] { f(id); }).join();
  } else {
    return false;
  }
  return true;
}

void Player::run_two_part(const std::string& verb, const std::string& arg) {
  if (run_range(verb, arg)) return;
  if (verb == "mark") {
    auto f = CORE(nvtxMarkA_impl_fntype, NVTX_CBID_CORE_MarkA);
    if (f) f(arg.c_str());
  } else if (verb == "dpush") {
    const auto colon = arg.find(':');
    auto f = CORE2(nvtxDomainRangePushEx_impl_fntype, NVTX_CBID_CORE2_DomainRangePushEx);
    const std::string text = arg.substr(colon + 1);
    const auto a = ascii_attributes(text.c_str());
    if (f) f(domain(arg.substr(0, colon)), &a);
  } else if (verb == "dpop") {
    auto f = CORE2(nvtxDomainRangePop_impl_fntype, NVTX_CBID_CORE2_DomainRangePop);
    if (f) f(domain(arg));
  } else if (verb == "fork") {
    // A child process marks once and exits, as a DataLoader worker would.
    const pid_t child = fork();
    if (child == 0) {
      auto f = CORE(nvtxMarkA_impl_fntype, NVTX_CBID_CORE_MarkA);
      if (f) f(arg.c_str());
      _exit(0);
    }
    waitpid(child, nullptr, 0);
  } else if (verb == "sleep") {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::stol(arg)));
  } else if (verb == "rate") {
    rate(arg);
  } else {
    std::fprintf(stderr, "fake_nvtx_loader: unknown op %s:%s\n", verb.c_str(), arg.c_str());
    std::exit(2);
  }
}

void Player::run(const std::string& op) {
  if (op == "pop") {
    pop();
    return;
  }
  if (op == "pop-thread") {
    std::thread([] { pop(); }).join();
    return;
  }
  const auto colon = op.find(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "fake_nvtx_loader: unknown op %s\n", op.c_str());
    std::exit(2);
  }
  const std::string verb = op.substr(0, colon);
  const std::string arg = op.substr(colon + 1);
  if (verb != "repeat") return run_two_part(verb, arg);
  const auto second = arg.find(':');
  const long times = std::stol(arg.substr(0, second));
  const std::string body = arg.substr(second + 1);
  for (long i = 0; i < times; ++i) {
    std::size_t from = 0;
    while (from <= body.size()) {
      const auto comma = body.find(',', from);
      run(body.substr(from, comma - from));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::setlocale(LC_ALL, "C.UTF-8");  // for mbstowcs (pushw)
  bool expect_injection = false;
  Player player;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect-injection") == 0) {
      expect_injection = true;
      continue;
    }
    player.run(argv[i]);
  }
  initialise();
  if (expect_injection && !g_runtime.attached) {
    std::fprintf(stderr, "fake_nvtx_loader: no NVTX injection attached\n");
    return 3;
  }
  return 0;
}
