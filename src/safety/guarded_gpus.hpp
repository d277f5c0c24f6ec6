#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

#include "hw/gpu.hpp"
#include "plan/plan.hpp"
#include "safety/gpu_lock.hpp"
#include "safety/restore.hpp"
#include "safety/settings_access.hpp"
#include "safety/settings_guard.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::safety {

// The GPUs of one process that changes settings, held in the order docs/safety.md gives: each GPU's lock
// taken, its settings captured and the journal on disk, then the watchdog started (it keeps the locks
// until it has restored), and only then any change. `sweep`, `tune` and a sweep's per-node agent
// (`measure --power-limit ...` under srun) hold their GPUs through this when they run as root
// (LocalSettingsAccess); the settings daemon holds each client's GPUs through it.
//
// restore() (or the destructor, when an exception unwinds) puts the captured settings back and dismisses
// the watchdog; a SIGKILL leaves that to the watchdog, a power loss to `wattwise restore`.
class GuardedGpus final : public HeldSettings {
 public:
  // environment_error when a GPU is held by another wattwise, the journal cannot be written or the
  // watchdog cannot be started: nothing has been changed then. `watchdog` empty: none (tests, simulated).
  // `journal_path` empty: this process's journal (journal_path_for(state_dir, pid)); the settings daemon,
  // which holds the GPUs of many clients at once, gives each its own (journal_path_for(dir, pid, part)).
  GuardedGpus(hw::ControllableGpuSystem& system, const std::vector<std::size_t>& gpu_indices,
              const std::filesystem::path& state_dir, const WatchdogLaunch& watchdog,
              const std::filesystem::path& journal_path = {});
  // Restores (failures to stderr, a destructor cannot throw) unless restore() ran.
  ~GuardedGpus() override;
  GuardedGpus(const GuardedGpus&) = delete;
  GuardedGpus& operator=(const GuardedGpus&) = delete;

  void apply(const plan::HardwareSettings& settings) override { guard_->apply(settings); }
  // Puts every GPU back (each independently) and dismisses the watchdog; once. GPUs whose driver stopped
  // answering (`unanswering`, UUIDs) are left to the watchdog (Watchdog::hand_over) with their journal.
  RestoreReport restore(const std::set<std::string>& unanswering = {}) override;
  const std::filesystem::path& journal_path() const { return guard_->journal_path(); }

 private:
  // Destroyed in reverse order: the watchdog is dismissed and the guard restored before the locks go.
  std::vector<GpuLock> locks_;
  std::optional<SettingsGuard> guard_;
  std::optional<Watchdog> watchdog_;
  bool restored_ = false;
};

}  // namespace wattwise::safety
