#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <streambuf>
#include <string>

#include "core/atomic_file.hpp"

namespace wattwise::cli {

// An output of -o, --json, --trace: opened (and so checked) before any work starts, written at the end, as
// `perf stat -o` writes: what the path names is written, never replaced by something else.
// - "-": standard output.
// - a regular file or a new path: replaced atomically (core/atomic_file.hpp), so a reader never sees half a
//   file; through a symbolic link, the file it names is replaced and the link stays.
// - a descriptor (/dev/fd/N, /proc/self/fd/N, /dev/stdout, /dev/stderr, as `--json >(jq .)` passes): that
//   descriptor, at its own offset.
// - a device or a FIFO (/dev/null, a named pipe with a reader): opened for writing, never truncated or
//   replaced (a FIFO's open waits for its reader, as a shell's `>` does).
class OutputFile {
 public:
  // Throws usage_error for a directory, environment_error when the path cannot be written.
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  void commit();  // flush, and rename into place when the output is a file
  const std::string& path() const { return path_; }

 private:
  class Buffer;
  std::string path_;
  std::optional<AtomicFile> file_;  // a regular file or a new path
  int fd_ = -1;                     // a descriptor, a device or a FIFO
  bool close_fd_ = false;
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  bool committed_ = false;
};

}  // namespace wattwise::cli
