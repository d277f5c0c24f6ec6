#pragma once

#include <cstddef>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "hw/gpu.hpp"
#include "plan/plan.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"

namespace wattwise::safety {

// Checked before any run starts, so a sweep never fails half-way on a setting it could have refused up
// front: each power limit within every GPU's [min, max] (usage_error naming the range and the GPU), and the
// permission to change it (environment_error with the driver's note on what is missing). `check_permission`
// false: the ranges only (the settings daemon, not this process, changes them and has the permission).
void validate_hardware_settings(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                const std::vector<plan::HardwareSettings>& settings, bool check_permission = true);

// The environment_error for a refused change of `what` ("power limit") on `gpu`: the driver's own reason
// from `failure` (the control's error text, without advice meant for another user) and hw::permission_advice.
Error refused_change(const hw::GpuReadings& gpu, const std::string& what, const std::string& failure,
                     bool process_is_root);

// Owns every change wattwise makes to the GPUs of a sweep. Before the first change it captures each GPU's
// current settings (by UUID) and writes them to the journal; restore() puts back those captured values,
// each GPU independently. The journal is removed after a complete restore and kept when any part failed.
//
// Usage by the runner:  guard.capture(); start the watchdog; for each run: guard.apply(run.hardware) ...;
// guard.restore().  apply() captures by itself if capture() was not called.
class SettingsGuard {
 public:
  SettingsGuard(hw::ControllableGpuSystem& system, std::vector<std::size_t> gpu_indices,
                std::filesystem::path journal_path);
  // Restores if changes are still held (an exception unwinding the runner); failures go to stderr because a
  // destructor cannot throw. Call restore() yourself to get the report.
  ~SettingsGuard();
  SettingsGuard(const SettingsGuard&) = delete;
  SettingsGuard& operator=(const SettingsGuard&) = delete;

  // Reads the current power limit of each GPU and writes the journal. environment_error when the journal
  // cannot be written (nothing has been changed then).
  void capture();
  // Sets the run's hardware settings on every GPU of the guard. Clocks wattwise has not locked before are
  // flagged in the journal (and the journal rewritten) before they are locked.
  void apply(const plan::HardwareSettings& settings);
  // Puts back the captured settings. Returns the per-GPU report; removes the journal only if all succeeded.
  // `unanswering`: UUIDs of GPUs whose driver stopped answering, left alone (restore_gpus).
  RestoreReport restore(const std::set<std::string>& unanswering = {});

  bool holds_changes() const { return captured_; }
  const std::filesystem::path& journal_path() const { return journal_path_; }
  const Journal& journal() const { return journal_; }

 private:
  void write();

  hw::ControllableGpuSystem& system_;
  std::vector<std::size_t> gpu_indices_;
  std::filesystem::path journal_path_;
  Journal journal_;
  bool captured_ = false;
};

}  // namespace wattwise::safety
