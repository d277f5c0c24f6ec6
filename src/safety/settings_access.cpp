// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/settings_access.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "safety/guarded_gpus.hpp"
#include "safety/settings_guard.hpp"

namespace wattwise::safety {
namespace {

// The capabilities cannot tell whether the driver will let us set a limit (root is not always enough: a
// container, an admin setting). Setting each GPU's limit to the value it already has asks the driver without
// changing anything. Done under the GPU locks, so no other wattwise is changing that value meanwhile.
void probe_power_limit_permission(hw::ControllableGpuSystem& system,
                                  const std::vector<std::size_t>& gpu_indices) {
  for (std::size_t index : gpu_indices) {
    hw::Gpu& gpu = system.gpu(index);
    const auto limits = gpu.power_limits();
    if (!limits) continue;  // validate_hardware_settings refused this already
    try {
      gpu.set_power_limit_w(limits->current_w);
    } catch (const std::exception& e) {
      throw refused_change(gpu, "power limit",
                           fmt::format("setting it to its own value {} W: {}", limits->current_w, e.what()),
                           ::geteuid() == 0);
    }
  }
}

}  // namespace

void LocalSettingsAccess::validate(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                   const std::vector<plan::HardwareSettings>& settings) const {
  validate_hardware_settings(system, gpu_indices, settings);
}

std::unique_ptr<HeldSettings> LocalSettingsAccess::hold(hw::GpuSystem& system,
                                                        const std::vector<std::size_t>& gpu_indices,
                                                        const std::vector<plan::HardwareSettings>& settings) const {
  // The interface passes the GPUs as every path reads them; this path changes its own, which must be the
  // same (a pairing the types cannot express, so it is checked here).
  if (&system != static_cast<hw::GpuSystem*>(&gpus_))
    throw std::logic_error("LocalSettingsAccess::hold: not the GPU system it was made with");
  auto held = std::make_unique<GuardedGpus>(gpus_, gpu_indices, state_dir_, watchdog_);
  if (std::any_of(settings.begin(), settings.end(), [](const auto& s) { return s.power_limit_w.has_value(); }))
    probe_power_limit_permission(gpus_, gpu_indices);
  return held;
}

}  // namespace wattwise::safety
