#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include "core/error.hpp"

namespace wattwise {

// What went wrong in an atomic write, for the caller to say what to do about it: the step that failed
// ("create temporary file", "write", "fsync", "close", "rename", "fsync directory") and its errno.
struct WriteFailure {
  std::filesystem::path target;
  const char* step = "";
  int error_number = 0;
};
using WriteFailureMessage = std::function<Error(const WriteFailure&)>;

// "cannot write PATH (STEP: REASON): check free space and permissions", an environment error.
Error default_write_failure(const WriteFailure& failure);

// The one way wattwise replaces a file (the settings journal, the store's files beside a database, the
// outputs of -o/--json/--trace): readers see the old file or the new one, never half of one, and a crash
// leaves the old one. The bytes go to a temporary file in the target's directory, under a name nobody can
// guess, created with O_EXCL|O_NOFOLLOW (a link or file planted there is refused, never written through);
// commit() fsyncs and closes it (a full disk may only show there), renames it over the target (a link at
// the target is replaced, not followed) and fsyncs the directory. Until commit, the destructor removes the
// temporary. Every failure is thrown as `message(failure)`.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target, WriteFailureMessage message = default_write_failure);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view bytes);
  void commit();
  const std::filesystem::path& target() const { return target_; }
  const std::filesystem::path& temporary() const { return temporary_; }

 private:
  [[noreturn]] void fail(const char* step, int error_number);

  std::filesystem::path target_;
  std::filesystem::path temporary_;
  WriteFailureMessage message_;
  int fd_ = -1;
  bool committed_ = false;
};

// AtomicFile in one call.
void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           const WriteFailureMessage& message = default_write_failure);

// Whether `name` (a file name, no directory) is an AtomicFile temporary: what a crash mid-write leaves.
bool is_atomic_temporary_name(std::string_view name);

// Makes a rename or removal of `path` durable: fsyncs the directory it is in. Best effort (a directory that
// cannot be opened or synced is left as it is): for a change already made that must not come back after a
// power loss (a removed journal, a database renamed into place). AtomicFile::commit does this itself.
void sync_directory_of(const std::filesystem::path& path);

}  // namespace wattwise
