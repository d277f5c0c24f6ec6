#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::safety {

// What one GPU must be put back to. Written before the first change to that GPU.
struct JournalEntry {
  std::string uuid;  // GPUs are found again by UUID: indices can change across reboots
  unsigned index = 0;
  std::string name;
  // The power limit that was set before wattwise changed anything (not the vendor default).
  std::optional<double> power_limit_w;
  // NVML has no getter for locked clocks (docs/safety.md), so whether clocks were locked before is unknown:
  // once wattwise locks them, restore resets them (unlocks). The flag is written before the first lock.
  bool reset_sm_clocks = false;
  bool reset_mem_clocks = false;
  bool operator==(const JournalEntry&) const = default;
};

struct Journal {
  long pid = 0;            // the wattwise process that made the changes
  std::string created_at;  // UTC, ISO 8601
  std::string host;
  std::vector<JournalEntry> gpus;
  bool operator==(const Journal&) const = default;
};

// One journal per wattwise process, so two sweeps on different GPUs do not overwrite each other's.
std::filesystem::path journal_path_for(const std::filesystem::path& state_dir, long pid);
// One of several journals of one process (the settings daemon: one per client and GPU):
// settings-journal-<pid>-<part>.json.
std::filesystem::path journal_path_for(const std::filesystem::path& state_dir, long pid, unsigned long part);
// All journals in the state directory, sorted by name.
std::vector<std::filesystem::path> find_journals(const std::filesystem::path& state_dir);

// Atomic (core/atomic_file.hpp): a temporary file in the same directory is written and fsync'ed, renamed
// over `path`, and the directory is fsync'ed, so a crash leaves the old journal or the new one, never half.
void write_journal(const std::filesystem::path& path, const Journal& journal);
// The journal in `text`, checked field by field (types, ranges, printable text, the format number) because
// a journal may be damaged or planted: throws only wattwise::Error (data_error), never applies a guess. A
// journal of another `format` is refused, not read. (The fuzz target calls this.)
Journal parse_journal(std::string_view text);
// Opens without following a symbolic link, and only a regular file owned by this user or root, at most
// 1 MiB: data_error when the file is not an acceptable journal, environment_error when it cannot be opened.
Journal read_journal(const std::filesystem::path& path);
void remove_journal(const std::filesystem::path& path);

// A new journal for this process: pid, host and time filled in.
Journal new_journal();

}  // namespace wattwise::safety
