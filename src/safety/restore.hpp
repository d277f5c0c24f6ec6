#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hw/gpu.hpp"
#include "safety/journal.hpp"

namespace wattwise::safety {

struct GpuRestoreOutcome {
  std::string uuid;
  std::optional<unsigned> index;  // where the GPU is now; absent when it was not found
  bool ok = false;
  std::string message;  // what was restored, or what failed and what to do
};

struct RestoreReport {
  std::vector<GpuRestoreOutcome> gpus;  // one per journal entry, in the journal's order
  std::vector<std::string> notes;       // where the journal was kept, and why
  bool all_ok() const;
  std::vector<std::string> failed_uuids() const;
  std::string summary() const;  // one line per GPU, then the notes
};

// Puts every GPU of the journal back: found by UUID, each independently (one failure does not stop the
// others), every control of a GPU attempted even when another failed. The power limit is read back to
// check it took. Never throws for a GPU's failure; it is in the report.
// GPUs named in `unanswering` (UUIDs: a call to their driver never returned) are not called at all, which
// would block this process too: each is reported as not restored, its entry kept for the watchdog and
// `wattwise restore`.
RestoreReport restore_gpus(hw::ControllableGpuSystem& system, const Journal& journal,
                           const std::set<std::string>& unanswering = {});

// The entries of `journal` whose GPU was not restored (report.gpus lines up with journal.gpus).
Journal unrestored_part(const Journal& journal, const RestoreReport& report);
// After a restore: removes the journal when every GPU was restored; otherwise rewrites it with only the GPUs
// that failed (a note in the report says where it is kept).
void settle_journal(const std::filesystem::path& journal_path, const Journal& journal, RestoreReport& report);

// `wattwise restore` and the watchdog: applies one journal file, then settles it as above. A GPU that is
// lost or unreadable is reported as not restored while every other GPU is restored. Throws wattwise::Error
// only when the file itself is refused (unreadable, unknown format: data_error), which leaves it untouched.
RestoreReport restore_from_journal_file(hw::ControllableGpuSystem& system,
                                        const std::filesystem::path& journal_path);

// A journal is stale unless its process is still alive and holds the lock of one of its GPUs (then it is
// a sweep in progress). Returns the warning every command prints, or nullopt when there is none:
// "a stale settings journal from PID N at TIME exists: run `wattwise restore`".
std::optional<std::string> check_stale_journal(const std::filesystem::path& state_dir);
std::vector<std::filesystem::path> stale_journals(const std::filesystem::path& state_dir);

// The temporary files that a wattwise killed while it rewrote its journal left in the state directory
// (`settings-journal-<PID>.json.tmp-<hex>`, or the same name after a dot), whose PID is no longer alive:
// removed, and their paths returned. Only regular files of this user or root, never through a link; a live
// writer's temporary is left alone. `wattwise restore` and every sweep's journal opening call it.
std::vector<std::filesystem::path> remove_stale_journal_temporaries(const std::filesystem::path& state_dir);

}  // namespace wattwise::safety
