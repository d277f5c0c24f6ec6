#pragma once

namespace wattwise::safety {

// While the guard holds changes, SIGINT, SIGTERM and SIGHUP must lead to "restore, then exit 128+N".
// The handler only records the signal (nothing else is async-signal-safe); the runner checks
// stop_requested() between steps and after its waits, restores, and exits with exit_code().
// The handlers are installed without SA_RESTART, so a blocking wait in the runner returns EINTR at once.
// The workload module forwards these signals to the job's process group itself; this class does not.
//
// One instance at a time (the flag is process-wide, as signal dispositions are).
class StopSignals {
 public:
  StopSignals();   // installs the handlers; the previous ones are kept
  ~StopSignals();  // puts the previous handlers back
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static bool stop_requested();
  static int signal_number();  // 0 when none arrived
  static int exit_code();      // 128 + signal number (the shell's convention)
};

}  // namespace wattwise::safety
