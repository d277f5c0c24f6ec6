// Compares wattwise's own NVML declarations with NVIDIA's nvml.h, entry by entry. Built and run only where
// nvml.h exists (the GPU machine): tools/gpu/h100_evidence.sh. The NVTX check (tools/gpu/nvtx_abi_check) is
// the same comparison of other tables, built with ABI_HEADER_NAME="nvToolsExt.h".
#include <cstdio>

#ifndef ABI_HEADER_NAME
#define ABI_HEADER_NAME "nvml.h"
#endif

#include "abi_table.hpp"

int main() {
  const auto a = ours();
  const auto b = real();
  int mismatches = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i].second == b[i].second;
    if (!same) ++mismatches;
    std::printf("%-52s ours %6lld  " ABI_HEADER_NAME " %6lld  %s\n", a[i].first.c_str(), a[i].second,
                b[i].second, same ? "ok" : "MISMATCH");
  }
  std::printf("%zu entries, %d mismatches\n", a.size(), mismatches);
  return mismatches == 0 ? 0 : 1;
}
