// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/guarded_gpus.hpp"

#include <unistd.h>

#include <cstdio>

#include "safety/journal.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"

namespace wattwise::safety {

GuardedGpus::GuardedGpus(hw::ControllableGpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                         const std::filesystem::path& state_dir, const WatchdogLaunch& watchdog,
                         const std::filesystem::path& journal_path) {
  ensure_state_dir(state_dir);
  for (std::size_t index : gpu_indices)
    locks_.push_back(GpuLock::acquire(state_dir, system.gpu(index).identity().uuid));
  remove_stale_journal_temporaries(state_dir);  // what a wattwise killed mid-rewrite left
  guard_.emplace(system, gpu_indices,
                 journal_path.empty() ? journal_path_for(state_dir, static_cast<long>(::getpid())) : journal_path);
  guard_->capture();  // the journal is on disk before the first change
  if (watchdog) {
    std::vector<int> lock_fds;  // the watchdog keeps the GPUs locked until it has restored them
    for (const auto& lock : locks_) lock_fds.push_back(lock.fd());
    watchdog_.emplace(watchdog, guard_->journal_path(), lock_fds);
  }
}

GuardedGpus::~GuardedGpus() {
  if (restored_) return;
  const RestoreReport report = restore();
  if (!report.all_ok())
    std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", report.summary().c_str());
}

RestoreReport GuardedGpus::restore(const std::set<std::string>& unanswering) {
  if (restored_) return {};
  restored_ = true;
  RestoreReport report = guard_->restore(unanswering);
  if (watchdog_ && !unanswering.empty()) {
    watchdog_->hand_over();
  } else if (watchdog_) {
    watchdog_->dismiss();
  }
  return report;
}

}  // namespace wattwise::safety
