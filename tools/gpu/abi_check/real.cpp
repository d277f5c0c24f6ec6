#include <nvml.h>

// Older headers name the clocks-event reasons "throttle reasons"; the bits are the same.
#ifndef nvmlClocksEventReasonGpuIdle
#define nvmlClocksEventReasonGpuIdle nvmlClocksThrottleReasonGpuIdle
#endif
#ifndef nvmlClocksEventReasonSwPowerCap
#define nvmlClocksEventReasonSwPowerCap nvmlClocksThrottleReasonSwPowerCap
#endif
#ifndef nvmlClocksEventReasonHwSlowdown
#define nvmlClocksEventReasonHwSlowdown nvmlClocksThrottleReasonHwSlowdown
#endif
#ifndef nvmlClocksEventReasonSwThermalSlowdown
#define nvmlClocksEventReasonSwThermalSlowdown nvmlClocksThrottleReasonSwThermalSlowdown
#endif

#include <cstddef>

#include "abi_table.hpp"

AbiTable real() {
#include "entries.inc"
}
