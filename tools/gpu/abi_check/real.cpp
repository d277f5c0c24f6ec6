#include <nvml.h>

#include <cstddef>

#include "abi_table.hpp"

AbiTable real() {
#include "entries.inc"
}
