// The trace and phases CSV readers of `wattwise report` take files a user may have edited or cut.
#include <cstdint>
#include <sstream>

#include "fuzz_harness.hpp"
#include "report/html/trace_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("trace_csv", [&] {
    std::istringstream in(text);
    wattwise::report::html::read_power_trace_csv(in, "fuzz.csv");
  });
  wattwise::fuzz::expect_only_wattwise_errors("phases_csv", [&] {
    std::istringstream in(text);
    wattwise::report::html::read_phases_csv(in, "fuzz.phases.csv");
  });
  return 0;
}
