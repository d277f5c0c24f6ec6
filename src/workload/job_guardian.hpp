#pragma once

#include <sys/types.h>

namespace wattwise::workload {

// Kills a job when wattwise dies without ending it (SIGKILL, the OOM killer, a crash), so the job does not
// live on with PPID 1, still burning the GPUs, after the settings watchdog restored them.
//
// A small process forked per job, before the job: it holds one end of a socket pair and wattwise the
// other (close-on-exec, so the job never holds it). The job's child writes its own pid (its process
// group) into the socket before exec, so the guardian knows the group before the job can run any code;
// wattwise adds descendants that left the group (setsid daemons it found reparented to itself) and takes
// back the ones it reaped. When the read sees end-of-file, wattwise is gone: the guardian sends SIGKILL to
// the job's group and to those descendants (and their groups), says so on stderr, and exits. A clean end
// sends a dismissal first.
//
// The child only makes async-signal-safe calls (read, kill, write, _exit), so forking it from a process
// that already runs threads (the sampler) is safe, and it needs no program of its own. It leads its own
// session and ignores SIGINT, SIGTERM, SIGHUP and SIGQUIT: a Ctrl-C or a kill of wattwise's process group
// cannot take it down before it has done its job.
class JobGuardian {
 public:
  JobGuardian();   // forks the guardian; throws an environment_error when it cannot
  ~JobGuardian();  // dismisses
  JobGuardian(const JobGuardian&) = delete;
  JobGuardian& operator=(const JobGuardian&) = delete;

  pid_t pid() const { return pid_; }
  // wattwise's end: the job's child writes its pid here between fork and exec (announce_group_from_child).
  int socket_fd() const { return end_; }

  // Async-signal-safe: for the child between fork and exec.
  static void announce_group_from_child(int socket_fd, pid_t process_group);
  void guard_group(pid_t process_group);
  void guard_process(pid_t pid);   // a descendant outside the group
  void forget_process(pid_t pid);  // reaped: its pid may be reused, never kill it
  // The clean end: the guardian exits without killing anything; waits for it.
  void dismiss();

 private:
  pid_t pid_ = -1;
  int end_ = -1;
};

}  // namespace wattwise::workload
