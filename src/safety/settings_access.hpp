#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hw/gpu.hpp"
#include "plan/plan.hpp"
#include "safety/restore.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::safety {

// The settings of some GPUs that this process holds and may change: from the moment it is made until
// restore() (or its destruction) every change is undone. `sweep`, `tune` and the SLURM node agent change
// settings through this alone, whichever path does the change:
//   - as root, here: safety::GuardedGpus (the GPU locks, the journal, the watchdog; docs/safety.md);
//   - as any other user, the settings daemon (daemon/client.hpp): the daemon holds the GPUs for as long as
//     this process's connection lasts and puts them back when it closes (docs/operators.md).
class HeldSettings {
 public:
  virtual ~HeldSettings() = default;
  // Sets every held GPU to `settings` (each knob given). Throws wattwise::Error when a GPU or the path
  // refuses: a usage error for a setting the policy does not allow, an environment error otherwise.
  virtual void apply(const plan::HardwareSettings& settings) = 0;
  // Puts every GPU back (each independently); once. GPUs whose driver stopped answering (`unanswering`,
  // UUIDs) are left to the watchdog where there is one.
  virtual RestoreReport restore(const std::set<std::string>& unanswering = {}) = 0;
};

// Which path changes this process's GPU settings: chosen once by the command (cli), then asked to check the
// settings and to hold the GPUs. A command that must change nothing (`--read-only`, `tune --dry-run`) has
// none: the runner, the tuner and the node agent change settings only through one.
class SettingsAccess {
 public:
  virtual ~SettingsAccess() = default;
  // What the results record as `settings_changed_by`: "root", "daemon" or "simulated"
  // (docs/results-schema.md).
  virtual std::string_view name() const = 0;
  // Checked before anything is held or changed: each setting within every GPU's range, and (as root) that
  // the driver lets this process change it. usage_error / environment_error as
  // validate_hardware_settings.
  virtual void validate(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                        const std::vector<plan::HardwareSettings>& settings) const = 0;
  // Holds the GPUs at these positions of `system`: nothing is changed yet, and everything changed through the
  // result is put back. environment_error when they cannot be held (another wattwise holds one, the journal
  // cannot be written, the daemon cannot be reached); nothing has been changed then. `settings` are those
  // that will be applied: a path may ask the driver or the daemon up front whether it may set them.
  virtual std::unique_ptr<HeldSettings> hold(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                             const std::vector<plan::HardwareSettings>& settings) const = 0;
};

// As root: the GPUs of `gpus` held by this process through GuardedGpus (locks, journal in `state_dir`,
// `watchdog`). It is made from the GPUs' controls (hw::ControllableGpuSystem), so a command that has only a
// read-only view cannot make one. hold() also sets each GPU's power limit to the value it has when any
// setting has a power limit: root is not always enough (a container, an admin setting), and this asks the
// driver without changing anything.
class LocalSettingsAccess final : public SettingsAccess {
 public:
  // `name`: "root"; a simulated GPU's settings are changed by this process too, as "simulated".
  LocalSettingsAccess(hw::ControllableGpuSystem& gpus, std::filesystem::path state_dir,
                      WatchdogLaunch watchdog, std::string name = "root")
      : gpus_(gpus),
        state_dir_(std::move(state_dir)),
        watchdog_(std::move(watchdog)),
        name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  void validate(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                const std::vector<plan::HardwareSettings>& settings) const override;
  // `system` must be the `gpus` this was made with (a logic error otherwise).
  std::unique_ptr<HeldSettings> hold(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                     const std::vector<plan::HardwareSettings>& settings) const override;

 private:
  hw::ControllableGpuSystem& gpus_;
  std::filesystem::path state_dir_;
  WatchdogLaunch watchdog_;
  std::string name_;
};

}  // namespace wattwise::safety
