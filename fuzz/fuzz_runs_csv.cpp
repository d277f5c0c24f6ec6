// The runs-CSV reader takes tables from elsewhere (published papers, other tools).
#include <cstdint>
#include <sstream>

#include "analysis/runs_csv.hpp"
#include "fuzz_harness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  wattwise::fuzz::expect_only_wattwise_errors("runs_csv", [&] {
    std::istringstream in(text);
    wattwise::analysis::parse_runs_csv(in, "fuzz.csv");
  });
  return 0;
}
