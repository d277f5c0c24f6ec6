// NVIDIA's own nvtx3 headers (CUDA's include/nvtx3, or the copy a Python wheel carries). Including
// nvToolsExt.h also brings nvtxDetail/nvtxTypes.h, where the export tables and callback ids live.
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "abi_table.hpp"

AbiTable real() {
#include "entries.inc"
}
