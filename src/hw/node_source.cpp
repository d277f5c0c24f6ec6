#include "hw/node_source.hpp"

namespace wattwise::hw {

std::string to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCpuPackage:
      return "cpu_package";
    case NodeKind::kDram:
      return "dram";
    case NodeKind::kCore:
      return "core";
    case NodeKind::kUncore:
      return "uncore";
    case NodeKind::kPsys:
      return "psys";
    case NodeKind::kMeter:
      return "meter";
  }
  return "meter";
}

}  // namespace wattwise::hw
