#pragma once

#include <sys/types.h>

#include <optional>
#include <vector>

namespace wattwise::workload {

// The one handler of SIGINT, SIGTERM and SIGHUP in wattwise ("stop signals"), installed once when a
// command that runs jobs or changes settings starts (`measure`, `sweep`) and kept until it ends:
//
// - every stop signal is recorded: the first one decides the exit code (128 + N), the count lets a second
//   Ctrl-C escalate at once, and a self-pipe (wake_fd) wakes a caller that poll()s;
// - while a job runs (set_job_group), the signal is also passed on to the job's process group: the job
//   is in its own group, so a Ctrl-C in a terminal reaches only wattwise, and wattwise decides. A signal
//   that arrived before the group was known (between fork and set_job_group) is passed on by
//   set_job_group itself, exactly once.
//
// The handler only touches lock-free atomics, kill() and write(): all async-signal-safe. It is installed
// with SA_RESTART, so the other threads' reads and writes (SQLite, the sampler) never see EINTR; callers
// that wait notice a stop by polling stop_requested() or wake_fd().
//
// A signal ignored at installation stays ignored, as a shell leaves it: nohup's SIGHUP, the SIGINT of a
// script's background job, all three in the settings watchdog (which must outlive them to restore).
//
// One instance at a time: dispositions are process-wide. The previous handlers come back in the destructor.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static const std::vector<int>& handled_signals();  // SIGINT, SIGTERM, SIGHUP
  static bool installed();
  // A stop signal that was ignored when the instance was made is left ignored (never recorded, never passed
  // on): `nohup wattwise sweep ...` outlives the terminal's hangup, as the user asked.
  static bool ignored_at_start(int signal_number);

  static bool stop_requested();
  static int signal_number();  // the first stop signal, 0 when none arrived
  static int exit_code();      // 128 + signal_number() (the shell's convention)
  static int count();          // how many stop signals arrived since installation
  // Every stop signal that arrived at least once, in ascending signal number.
  static std::vector<int> received_signals();
  // Readable once a stop signal has arrived (self-pipe); -1 when not installed.
  static int wake_fd();

  // From now on stop signals are also sent to this process group (a job's); 0 stops forwarding. A
  // signal recorded but not yet passed on to any job is sent to the new group at once.
  static void set_job_group(pid_t process_group);
  static pid_t job_group();  // 0: none
};

}  // namespace wattwise::workload
