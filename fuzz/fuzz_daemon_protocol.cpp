// The settings daemon parses request lines from any local user, as root (src/daemon/protocol.hpp), and its
// clients parse what the socket answers: both must reject garbage (nullopt), never throw or crash; an
// accepted request must survive format -> parse, and a reply line must stay one line.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "daemon/protocol.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("daemon_protocol", [&] {
    std::string why;
    const auto request = wattwise::daemon::parse_request(line, &why);
    if (request) {
      const std::string formatted = wattwise::daemon::format_request(*request);
      const auto again = wattwise::daemon::parse_request(std::string_view(formatted).substr(0, formatted.size() - 1));
      if (!again || !(*again == *request)) {
        std::fprintf(stderr, "daemon_protocol: a parsed request does not parse after formatting\n");
        std::abort();
      }
    } else if (why.empty()) {
      std::fprintf(stderr, "daemon_protocol: a refused request without a reason\n");
      std::abort();
    }
    if (const auto reply = wattwise::daemon::parse_reply(line)) {
      const std::string formatted = wattwise::daemon::format_reply(*reply);
      if (formatted.find('\n') != formatted.size() - 1 || !wattwise::daemon::parse_reply(formatted)) {
        std::fprintf(stderr, "daemon_protocol: a reply does not format to one line that parses\n");
        std::abort();
      }
    }
    // Whatever text a reply is given (a driver's message), it goes out as one line.
    const std::string out = wattwise::daemon::format_reply({wattwise::daemon::Reply::Status::kFailed, std::string(line)});
    if (out.find('\n') != out.size() - 1) {
      std::fprintf(stderr, "daemon_protocol: a reply's text broke its line\n");
      std::abort();
    }
  });
  return 0;
}
