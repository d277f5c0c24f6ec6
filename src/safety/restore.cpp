// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/restore.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <string_view>
#include <thread>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "safety/gpu_lock.hpp"

namespace wattwise::safety {
namespace {

// NVML speaks milliwatts and some GPUs round to whole watts; a smaller difference is the same limit.
constexpr double kLimitToleranceW = 0.5;
// A control that failed for a reason other than a lost GPU or a refused value is tried this many times in
// all, this far apart (a driver TIMEOUT under load passes; 1 s in all is short beside a sweep's runs).
constexpr int kRestoreAttempts = 5;
constexpr std::chrono::milliseconds kRestoreRetryPause{250};

// A GPU whose identity could not be read (lost, or failing) has no UUID and is never taken for another.
hw::Gpu* find_by_uuid(hw::ControllableGpuSystem& system, const std::string& uuid) {
  for (std::size_t i = 0; i < system.count(); ++i) {
    const std::string& candidate = system.gpu(i).identity().uuid;
    if (!candidate.empty() && candidate == uuid) return &system.gpu(i);
  }
  return nullptr;
}

// Why a journal's GPU is not among the readable ones: the GPUs that could not be read, with the driver's
// reason (a lost GPU is the usual cause).
std::string unreadable_gpus(hw::GpuSystem& system) {
  std::vector<std::string> unreadable;
  for (std::size_t i = 0; i < system.count(); ++i) {
    hw::GpuReadings& gpu = system.gpu(i);
    if (!gpu.identity().uuid.empty()) continue;
    std::string why;
    try {
      why = gpu.capabilities().set_permission_note;
    } catch (const std::exception& e) {
      why = e.what();
    }
    unreadable.push_back(fmt::format("GPU {} cannot be read ({})", gpu.identity().index, why));
  }
  return fmt::format("{}", fmt::join(unreadable, "; "));
}

GpuRestoreOutcome restore_one(hw::ControllableGpuSystem& system, const JournalEntry& entry) {
  GpuRestoreOutcome outcome;
  outcome.uuid = entry.uuid;
  hw::Gpu* gpu = find_by_uuid(system, entry.uuid);
  if (gpu == nullptr) {
    const std::string unreadable = unreadable_gpus(system);
    outcome.message =
        unreadable.empty()
            ? fmt::format(
                  "NOT RESTORED: GPU {} ({}, was GPU {}) not found on this machine: is it still installed? "
                  "restore it by hand",
                  entry.uuid, entry.name, entry.index)
            : fmt::format(
                  "NOT RESTORED: GPU {} ({}, was GPU {}) not found, it may be lost: {}; check `nvidia-smi` "
                  "and the kernel log (Xid), then run `wattwise restore` again after a GPU reset or reboot",
                  entry.uuid, entry.name, entry.index, unreadable);
    return outcome;
  }
  outcome.index = gpu->identity().index;
  std::vector<std::string> done;
  std::vector<std::string> failed;
  // Each control on its own: a failed power limit must not keep the clocks locked. A driver's momentary
  // error (TIMEOUT, UNKNOWN) is tried again: a GPU must not stay capped for one slow call; a lost GPU or a
  // refused value will not change by waiting.
  const auto attempt = [&](const std::string& what, auto&& action) {
    for (int tries = 1;; ++tries) {
      try {
        action();
        done.push_back(what);
        return;
      } catch (const hw::GpuLostError& e) {
        failed.push_back(fmt::format("{}: {}", what, e.what()));
        return;
      } catch (const std::exception& e) {
        const auto* error = dynamic_cast<const Error*>(&e);
        if (tries >= kRestoreAttempts || (error != nullptr && error->kind() == ErrorKind::kUsage)) {
          failed.push_back(fmt::format("{}: {}", what, e.what()));
          return;
        }
        std::this_thread::sleep_for(kRestoreRetryPause);
      }
    }
  };
  if (entry.power_limit_w) {
    attempt(fmt::format("power limit {} W", *entry.power_limit_w), [&] {
      gpu->set_power_limit_w(*entry.power_limit_w);
      auto limits = gpu->power_limits();
      if (limits && std::abs(limits->current_w - *entry.power_limit_w) > kLimitToleranceW) {
        throw environment_error(fmt::format("read back {} W", limits->current_w));
      }
    });
  }
  if (entry.reset_sm_clocks) attempt("SM clocks reset", [&] { gpu->reset_sm_clocks(); });
  if (entry.reset_mem_clocks) attempt("memory clocks reset", [&] { gpu->reset_mem_clocks(); });
  outcome.ok = failed.empty();
  if (outcome.ok) {
    outcome.message = done.empty() ? "nothing to restore" : fmt::format("restored {}", fmt::join(done, ", "));
  } else {
    outcome.message = fmt::format("FAILED {}", fmt::join(failed, "; "));
  }
  return outcome;
}

bool process_alive(long pid) {
  return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

bool is_stale(const std::filesystem::path& state_dir, const Journal& journal) {
  if (!process_alive(journal.pid)) return true;
  for (const auto& gpu : journal.gpus) {
    auto holder = gpu_lock_holder(state_dir, gpu.uuid);
    if (holder) return false;  // its process (or its watchdog) holds the GPU: a sweep in progress
  }
  // The PID is alive but holds no lock: it was reused by an unrelated process after a reboot or crash.
  return true;
}

}  // namespace

bool RestoreReport::all_ok() const {
  for (const auto& gpu : gpus) {
    if (!gpu.ok) return false;
  }
  return true;
}

std::string RestoreReport::summary() const {
  std::string text;
  for (const auto& gpu : gpus) {
    text += fmt::format("GPU {} {}: {}\n", gpu.index ? std::to_string(*gpu.index) : std::string("?"),
                        gpu.uuid, gpu.message);
  }
  for (const auto& note : notes) text += note + "\n";
  return text;
}

std::vector<std::string> RestoreReport::failed_uuids() const {
  std::vector<std::string> failed;
  for (const auto& gpu : gpus) {
    if (!gpu.ok) failed.push_back(gpu.uuid);
  }
  return failed;
}

Journal unrestored_part(const Journal& journal, const RestoreReport& report) {
  Journal rest = journal;
  rest.gpus.clear();
  for (std::size_t i = 0; i < journal.gpus.size() && i < report.gpus.size(); ++i) {
    if (!report.gpus[i].ok) rest.gpus.push_back(journal.gpus[i]);
  }
  return rest;
}

void settle_journal(const std::filesystem::path& journal_path, const Journal& journal,
                    RestoreReport& report) {
  if (report.all_ok()) {
    remove_journal(journal_path);
    return;
  }
  // Kept for the GPUs that failed only: a later `wattwise restore` must not put back a healthy GPU's old
  // values over whatever was set on it since.
  try {
    write_journal(journal_path, unrestored_part(journal, report));
    report.notes.push_back(
        fmt::format("journal kept at {} for {}: fix the failures above and run `wattwise restore` again",
                    journal_path.string(), fmt::join(report.failed_uuids(), ", ")));
  } catch (const std::exception& e) {
    report.notes.push_back(
        fmt::format("journal kept at {} (unchanged: {}): fix the failures above and run "
                    "`wattwise restore` again",
                    journal_path.string(), e.what()));
  }
}

RestoreReport restore_gpus(hw::ControllableGpuSystem& system, const Journal& journal,
                           const std::set<std::string>& unanswering) {
  RestoreReport report;
  for (const auto& entry : journal.gpus) {
    if (unanswering.contains(entry.uuid)) {
      const hw::Gpu* gpu = find_by_uuid(system, entry.uuid);  // identities are read once, at start
      report.gpus.push_back(
          {entry.uuid, gpu ? std::optional<unsigned>(gpu->identity().index) : std::nullopt, false,
           "NOT RESTORED: a call to its driver never returned; the watchdog restores it from the journal "
           "should the driver answer again, else reset the GPU (nvidia-smi -r, or a reboot) and run "
           "`wattwise restore`"});
      continue;
    }
    report.gpus.push_back(restore_one(system, entry));
  }
  return report;
}

RestoreReport restore_from_journal_file(hw::ControllableGpuSystem& system,
                                        const std::filesystem::path& journal_path) {
  const Journal journal = read_journal(journal_path);
  RestoreReport report = restore_gpus(system, journal);
  settle_journal(journal_path, journal, report);
  return report;
}

std::vector<std::filesystem::path> stale_journals(const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> stale;
  for (const auto& path : find_journals(state_dir)) {
    try {
      if (is_stale(state_dir, read_journal(path))) stale.push_back(path);
    } catch (const Error&) {
      stale.push_back(path);  // unreadable: certainly nobody is using it; `restore` will say why
    }
  }
  return stale;
}

namespace {

// The PID of a journal temporary's name, or nothing when the name is not one.
std::optional<long> journal_temporary_pid(std::string_view name) {
  if (name.starts_with('.')) name.remove_prefix(1);
  constexpr std::string_view kPrefix = "settings-journal-";
  constexpr std::string_view kMark = ".json.tmp-";
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  const auto mark = name.find(kMark);
  if (mark == 0 || mark == std::string_view::npos || mark > 40) return std::nullopt;
  std::string_view digits = name.substr(0, mark);
  const std::string_view suffix = name.substr(mark + kMark.size());
  // The daemon's journals are settings-journal-<pid>-<part>.json: the PID is before the dash.
  if (const auto dash = digits.find('-'); dash != std::string_view::npos && dash + 1 < digits.size() &&
                                          digits.substr(dash + 1).find_first_not_of("0123456789") ==
                                              std::string_view::npos)
    digits = digits.substr(0, dash);
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  if (suffix.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos ||
      suffix.find_first_not_of("0123456789abcdef") != std::string_view::npos)
    return std::nullopt;
  return parse_integer<long>(digits);
}

}  // namespace

std::vector<std::filesystem::path> remove_stale_journal_temporaries(const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(state_dir, ec)) {
    const auto pid = journal_temporary_pid(item.path().filename().string());
    if (!pid || process_alive(*pid)) continue;
    struct stat info {};
    if (::lstat(item.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode) ||
        (info.st_uid != ::geteuid() && info.st_uid != 0))
      continue;
    if (::unlink(item.path().c_str()) == 0) removed.push_back(item.path());
  }
  return removed;
}

std::optional<std::string> check_stale_journal(const std::filesystem::path& state_dir) {
  std::vector<std::string> warnings;
  for (const auto& path : stale_journals(state_dir)) {
    try {
      Journal journal = read_journal(path);
      warnings.push_back(
          fmt::format("a stale settings journal from PID {} at {} exists ({}): run `wattwise restore`",
                      journal.pid, journal.created_at, path.string()));
    } catch (const Error& e) {
      warnings.push_back(
          fmt::format("an unreadable settings journal exists: {}", e.what()));  // names the path
    }
  }
  if (warnings.empty()) return std::nullopt;
  return fmt::format("{}", fmt::join(warnings, "\n"));
}

}  // namespace wattwise::safety
