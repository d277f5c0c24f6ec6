// The readings server parses request lines from any process of the job's user (docs/windows.md), and the
// clients' reply parser reads what the socket says: both must reject garbage (nullopt), never throw or
// crash, and an accepted request must survive format -> parse.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz_harness.hpp"
#include "window/window_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("window_protocol", [&] {
    std::string why;
    const auto request = wattwise::window::parse_window_request(line, &why);
    if (request) {
      const auto again =
          wattwise::window::parse_window_request(wattwise::window::format_window_request(*request));
      if (!again || again->begin != request->begin || again->end != request->end ||
          again->rank != request->rank) {
        std::fprintf(stderr, "window_protocol: a parsed request does not parse after formatting\n");
        std::abort();
      }
    }
    if (const auto reply = wattwise::window::parse_window_reply(line))
      wattwise::window::format_window_reply(*reply);
  });
  return 0;
}
