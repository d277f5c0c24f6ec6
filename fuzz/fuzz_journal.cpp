// The journal reader: `wattwise restore` (often as root) reads every journal in the state directory,
// which may be damaged by a crash, a full disk or another user. read_journal() checks the file (a regular
// file of this user or root, no link, at most 1 MiB) and hands its text to parse_journal(), fuzzed here.
#include <cstdint>
#include <string_view>

#include "fuzz_harness.hpp"
#include "safety/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("journal", [&] { wattwise::safety::parse_journal(text); });
  return 0;
}
