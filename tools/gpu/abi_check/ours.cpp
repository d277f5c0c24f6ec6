#include <cstddef>

#include "abi_table.hpp"
#include "hw/nvml_abi.hpp"

AbiTable ours() {
  using namespace wattwise::nvml_abi;
#include "entries.inc"
}
