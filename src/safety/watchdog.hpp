#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>

#include "hw/gpu.hpp"

namespace wattwise::safety {

// Opens the watchdog's own view of the GPUs (NVML in production, a test double in tests).
using GpuSystemFactory = std::function<std::unique_ptr<hw::GpuSystem>()>;

// SIGKILL cannot be caught, so a small forked process restores the settings when wattwise dies without
// restoring them. It holds one end of a socket pair; wattwise holds the other (close-on-exec, so the job
// does not inherit it and keep it open). When its read sees end-of-file (wattwise died, even by SIGKILL)
// and the journal still exists, it opens its own GpuSystem, restores from the journal and exits. On a
// clean end, dismiss() sends one byte first: the watchdog exits without restoring.
//
// It runs in its own session and ignores SIGINT and SIGHUP, so the Ctrl-C that reaches the whole process
// group cannot kill it before wattwise has restored. It keeps the GPU lock file descriptors (inherited),
// so no other wattwise can take the GPUs until it has restored them.
//
// Start it after the journal is written and before the first change, and before any thread is started:
// after fork() only the forking thread exists in the child, so the factory must not rely on others.
class Watchdog {
 public:
  Watchdog(GpuSystemFactory factory, std::filesystem::path journal_path);
  ~Watchdog();  // dismisses
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The clean end: tells the watchdog to exit without restoring and waits for it.
  void dismiss();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int parent_end_ = -1;
};

}  // namespace wattwise::safety
