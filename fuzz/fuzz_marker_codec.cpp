// The marker decoder reads datagrams any process of the job's user can send: it must reject garbage
// (nullopt), never throw or crash, and whatever it accepts must survive encode -> decode.
#include <cstdint>
#include <string_view>

#include "fuzz_harness.hpp"
#include "workload/marker_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("marker_codec", [&] {
    std::string reason;
    const auto marker = wattwise::workload::decode_marker(message, &reason);
    if (!marker) return;
    const auto again = wattwise::workload::decode_marker(wattwise::workload::encode_marker(*marker));
    if (!again) {
      std::fprintf(stderr, "marker_codec: a decoded marker does not decode after encoding\n");
      std::abort();
    }
    wattwise::workload::percent_decode(message);
  });
  return 0;
}
