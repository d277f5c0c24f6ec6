#pragma once

#include <string>

namespace wattwise::hw {

// What to do when the driver refuses a setting: not root -> run as root; root -> the driver refused anyway,
// so a container without the capability or an administrator's setting / GPU mode forbids it. One text for
// the NVML layer's refusals and the settings guard's, so root is never told to use sudo.
inline std::string permission_advice(bool process_is_root) {
  if (!process_is_root)
    return "changing power limits and locked clocks needs root (NVML device commands): run wattwise as root "
           "(e.g. with sudo; `nvidia-smi -acp UNRESTRICTED` opens only application clocks to other users)";
  return "wattwise runs as root, so the driver itself refused: in a container, give it the capability "
         "(e.g. `docker run --cap-add SYS_ADMIN`, or --privileged); otherwise an administrator's setting or "
         "the GPU's mode (a VM guest, MIG) forbids the change: ask the administrator";
}

}  // namespace wattwise::hw
