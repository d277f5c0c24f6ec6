#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "abi_table.hpp"
#include "nvtx/nvtx_abi.hpp"

AbiTable ours() {
  using namespace wattwise::nvtx_abi;
#include "entries.inc"
}
