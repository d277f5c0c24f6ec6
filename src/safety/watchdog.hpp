#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "hw/gpu.hpp"

namespace wattwise::safety {

// Opens the watchdog's own view of the GPUs (NVML in production, a test double in tests).
using GpuSystemFactory = std::function<std::unique_ptr<hw::ControllableGpuSystem>()>;

// How the watchdog process is made.
struct WatchdogLaunch {
  // Production: fork, then exec `exec_binary restore --watchdog FD --journal PATH`. A fresh process: it
  // inherits nothing of wattwise's initialised NVML (nor its threads, locks or allocator state), and loads
  // and initialises NVML only when it must restore.
  std::filesystem::path exec_binary;
  // Tests: the forked child runs run_watchdog() with this factory, without exec.
  GpuSystemFactory in_process;

  explicit operator bool() const { return !exec_binary.empty() || static_cast<bool>(in_process); }
  // This very binary (/proc/self/exe), which has the hidden `restore --watchdog` subcommand.
  static WatchdogLaunch exec_self();
};

// SIGKILL cannot be caught, so a separate process restores the settings when wattwise dies without
// restoring them. It holds one end of a socket pair; wattwise holds the other (close-on-exec, so the job
// does not inherit it and keep it open). When its read sees end-of-file (wattwise died, even by SIGKILL)
// and the journal still exists, it opens its own GpuSystem, restores from the journal (every reachable GPU;
// a lost one is reported and kept in the journal) and exits. On a clean end, dismiss() sends one byte
// first: the watchdog exits without restoring.
//
// It runs in its own session and ignores SIGINT, SIGHUP and SIGTERM, so the Ctrl-C that reaches the whole
// process group (or the SIGTERM SLURM sends every process of a step it ends) cannot kill it before wattwise
// has restored. It keeps the GPU lock descriptors (`keep_fds`, open
// across its exec), so no other wattwise can take the GPUs until it has restored them.
//
// Start it after the journal is written and before the first change, and before any thread is started.
class Watchdog {
 public:
  // environment_error when the process cannot be started (fork, or exec of the binary): wattwise then
  // refuses to change settings.
  Watchdog(const WatchdogLaunch& launch, std::filesystem::path journal_path, std::vector<int> keep_fds = {});
  // The in-process seam for tests (no exec).
  Watchdog(GpuSystemFactory factory, std::filesystem::path journal_path);
  ~Watchdog();  // dismisses
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // The clean end: tells the watchdog to exit without restoring and waits for it.
  void dismiss();
  // The end when some GPUs could not be restored because their driver stopped answering: the watchdog is
  // left to restore what the journal still holds, at once, in its own process (where a call that never
  // returns blocks nobody else), and is not waited for. It keeps those GPUs' locks meanwhile.
  void hand_over();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int parent_end_ = -1;
};

// The watchdog's whole life, in its own process: waits on `fd` (its end of the socket pair), and when
// wattwise is gone without dismissing it, restores from `journal_path` through `factory`. Returns the exit
// status (0: nothing to do or all restored; 1: something was not restored, the journal is kept for it).
// `wattwise restore --watchdog FD --journal PATH` runs this.
int run_watchdog(int fd, const GpuSystemFactory& factory, const std::filesystem::path& journal_path);

}  // namespace wattwise::safety
