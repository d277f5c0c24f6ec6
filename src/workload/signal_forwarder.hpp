#pragma once

#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <vector>

namespace wattwise::workload {

// While alive, SIGINT/SIGTERM/SIGHUP sent to wattwise are forwarded to the job's process group (the
// job is in its own group, so Ctrl-C in a terminal reaches only wattwise) and remembered, so the
// caller can restore GPU settings and report "interrupted". The previous handlers come back in the
// destructor. Signal handlers are process-wide, so only one forwarder may exist at a time.
class SignalForwarder {
 public:
  explicit SignalForwarder(pid_t job_process_group);
  ~SignalForwarder();
  SignalForwarder(const SignalForwarder&) = delete;
  SignalForwarder& operator=(const SignalForwarder&) = delete;

  static const std::vector<int>& forwarded_signals();  // SIGINT, SIGTERM, SIGHUP

  // The first forwarded signal that arrived, if any.
  std::optional<int> first_signal() const;
  // Every forwarded signal that arrived at least once, in ascending signal number.
  std::vector<int> received_signals() const;
  // Readable once a signal has arrived (self-pipe), for callers that poll() on several things.
  int wake_fd() const { return wake_pipe_[0]; }

 private:
  int wake_pipe_[2] = {-1, -1};
  std::vector<struct sigaction> previous_;  // restored in the destructor
};

}  // namespace wattwise::workload
