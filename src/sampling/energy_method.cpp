#include "sampling/trace.hpp"

namespace wattwise::sampling {

// Short, stable names: they appear in CSV/JSON output next to every figure and scripts match on them.
const char* to_string(EnergyMethod method) {
  switch (method) {
    case EnergyMethod::kCounter:
      return "counter";
    case EnergyMethod::kSamplesReconciled:
      return "samples-reconciled";
    case EnergyMethod::kInstantReconciled:
      return "instant-reconciled";
    case EnergyMethod::kSamples:
      return "samples";
    case EnergyMethod::kInstantPower:
      return "instant-power";
    case EnergyMethod::kAveragePower:
      return "average-power";
    case EnergyMethod::kNone:
      return "none";
  }
  return "none";
}

}  // namespace wattwise::sampling
