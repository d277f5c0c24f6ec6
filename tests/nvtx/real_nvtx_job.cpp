// A program instrumented with NVTX as any C++ job is, built against NVIDIA's own nvtx3 headers where the
// build machine has them (CUDA's include dir): here the real NVTX runtime finds NVTX_INJECTION64_PATH,
// loads libwattwise-nvtx.so and calls it, not our test loader. tests/e2e/nvtx_test.cpp runs it under
// `wattwise measure --nvtx`.
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <thread>

namespace {

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

nvtxEventAttributes_t attributes() {
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  return a;
}

}  // namespace

int main() {
  nvtxRangePushA("training");  // training > 3 epochs > 2 steps each
  for (int epoch = 0; epoch < 3; ++epoch) {
    nvtxRangePushA("epoch");
    for (int step = 0; step < 2; ++step) {
      nvtxRangePushA("step");
      sleep_ms(50);
      nvtxRangePop();
    }
    nvtxRangePop();
  }
  nvtxRangePop();

  nvtxRangePushW(L"\u00e9valuation \u2713");
  sleep_ms(20);
  nvtxRangePop();

  const nvtxRangeId_t load = nvtxRangeStartA("load");  // ended on another thread
  std::thread([load] {
    sleep_ms(20);
    nvtxRangeEnd(load);
  }).join();

  nvtxEventAttributes_t registered = attributes();
  registered.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  registered.message.registered = nvtxDomainRegisterStringA(nullptr, "registered");
  nvtxRangePushEx(&registered);
  sleep_ms(10);
  nvtxRangePop();

  const nvtxDomainHandle_t library = nvtxDomainCreateA("mylib");
  nvtxEventAttributes_t op = attributes();
  op.messageType = NVTX_MESSAGE_TYPE_ASCII;
  op.message.ascii = "op";
  nvtxDomainRangePushEx(library, &op);
  sleep_ms(10);
  nvtxDomainRangePop(library);

  nvtxMarkA("done");
  return 0;
}
