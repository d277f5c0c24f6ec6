#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "workload/child_processes.hpp"
#include "workload/job_guardian.hpp"

namespace wattwise::workload {

// What to start: argv[0] is looked up in PATH (the job's PATH, extra_environment included) unless it
// contains a '/'. Never goes through a shell, so knob values substituted into argv stay literal.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> extra_environment;  // added to (or replacing in) our environment
  std::optional<std::filesystem::path> working_directory;
  // The job's stdout goes to wattwise's stderr: `--json -` keeps stdout for the JSON alone.
  bool stdout_to_stderr = false;
  // Where the job's stdout and stderr go instead of ours (an OutputTee's write end); -1: ours.
  int stdout_fd = -1;
  int stderr_fd = -1;
};

// How long a job may take to end after wattwise passed it a stop signal (SIGINT/SIGTERM/SIGHUP) before
// its process group is killed; a second stop signal kills it at once. 10 s: enough for a training script to
// write a checkpoint, short enough that nobody reaches for kill -9.
inline constexpr std::chrono::seconds kStopGrace{10};

struct WaitOptions {
  std::optional<Nanos> timeout;  // none: wait for as long as the job runs
  Nanos kill_grace = std::chrono::duration_cast<Nanos>(std::chrono::seconds(5));  // SIGTERM -> SIGKILL
  Nanos stop_grace = std::chrono::duration_cast<Nanos>(kStopGrace);               // stop signal -> SIGKILL
};

// A job running in its own process group, so that a signal reaches the job and all its children
// (data loader workers, torchrun ranks) and never wattwise itself.
//
// Nothing of the job outlives it (docs/safety.md, "Signals and the job's processes"):
// - while it runs, the StopSignals (if installed) pass SIGINT/SIGTERM/SIGHUP on to its group, from the
//   moment it exists; wait() kills the group kStopGrace after the first, at once after a second;
// - this process becomes a child subreaper, so a daemon the job double-forks is reparented here; when the
//   job's leader has ended, whatever is left of its group and every such daemon is killed and reaped;
// - a JobGuardian kills the group (and the daemons found so far) if wattwise itself dies, SIGKILL included;
//   the leader also has PR_SET_PDEATHSIG = SIGKILL, in case the guardian died with wattwise.
// Call start() from a thread that lives as long as the job: the kernel sends the parent-death signal when
// the forking *thread* ends. Only one job at a time should run in a process: cleaning up after one job
// kills any child of this process that appeared after that job started and is not a job or guardian.
class Process {
 public:
  // Starts the job. Throws an environment_error ("command not found: X") if it cannot be executed:
  // a CLOEXEC pipe tells whether exec succeeded, so a typo never looks like a job that exited 127.
  static Process start(const LaunchSpec& spec);

  Process(Process&& other) noexcept;
  Process& operator=(Process&& other) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  // A job still running when its Process goes away (an exception unwinding) is killed and reaped.
  ~Process();

  pid_t pid() const { return pid_; }
  pid_t process_group() const { return pid_; }  // the job leads its own group
  bool finished() const { return finished_; }

  // Blocks until the job ends, or until the time-out: then SIGTERM to the group, SIGKILL after the
  // grace period, and timed_out() is true. A stop signal to wattwise (already passed on to the job) makes
  // it SIGKILL the group after options.stop_grace, or at once on a second one, saying so on stderr.
  // Returns exit_code(). Safe to call again after it returned.
  int wait(const WaitOptions& options = {});
  // Non-blocking: true (and the status is known) if the job has ended.
  bool poll();

  // Sends `signal_number` to the job's whole process group; a no-op once the job has been reaped.
  void forward_signal(int signal_number);

  // The job's exit code, or 128+N when it was killed by signal N (as shells report it).
  int exit_code() const { return exit_code_; }
  // When the end was seen (CLOCK_MONOTONIC, as MonotonicClock): the leader reaped, before the clean-up of
  // its leftovers, so that time is not counted as the job's.
  std::optional<Nanos> ended_at() const { return ended_at_; }
  std::optional<int> signal() const { return signal_; }
  bool timed_out() const { return timed_out_; }
  // How many processes the job left behind (its group after the leader ended, reparented daemons) that
  // were killed when it ended.
  std::size_t leftovers_killed() const { return leftovers_killed_; }

 private:
  Process() = default;
  void record_status(int wait_status);
  void kill_and_reap();
  bool wait_until(std::optional<Nanos> deadline);  // false at the deadline
  // Sleeps until the job ends, a stop signal arrives or `until` (at most 0.5 s).
  void wait_for_event(std::optional<Nanos> until) const;
  void after_exit();     // the leader is reaped: stop forwarding, end leftovers, dismiss the guardian
  void watch_escaped();  // hands daemons reparented to us to the guardian, reaps dead ones
  std::vector<ChildProcess> new_children() const;  // children that are not ours: the job's orphans

  pid_t pid_ = -1;
  bool finished_ = false;
  int exit_code_ = -1;
  std::optional<int> signal_;
  bool timed_out_ = false;
  std::size_t leftovers_killed_ = 0;
  bool group_killed_ = false;  // we sent the group SIGKILL: its members were not left behind by the job
  std::unique_ptr<JobGuardian> guardian_;
  std::vector<pid_t> children_before_;  // this process's children when the job started: not the job's
  std::vector<pid_t> escaped_;          // the job's descendants reparented to us, known to the guardian
  Nanos next_escape_check_{0};
  int pidfd_ = -1;  // readable when the job has ended (pidfd_open); -1: polled every 5 ms
  std::optional<Nanos> ended_at_;
};

}  // namespace wattwise::workload
