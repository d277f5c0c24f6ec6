#pragma once

// The facts of an NVML ABI as numbers, so that our declarations (ours.cpp) and NVIDIA's real nvml.h
// (real.cpp) can be compared without ever being compiled in the same translation unit (nvml.h defines
// macros with the same names as our constants).
#include <string>
#include <utility>
#include <vector>

using AbiTable = std::vector<std::pair<std::string, long long>>;
AbiTable ours();
AbiTable real();
