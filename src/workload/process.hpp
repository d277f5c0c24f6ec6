#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"

namespace wattwise::workload {

// What to start: argv[0] is looked up in PATH (the job's PATH, extra_environment included) unless it
// contains a '/'. Never goes through a shell, so knob values substituted into argv stay literal.
struct LaunchSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> extra_environment;  // added to (or replacing in) our environment
  std::optional<std::filesystem::path> working_directory;
};

struct WaitOptions {
  std::optional<Nanos> timeout;  // none: wait for as long as the job runs
  Nanos kill_grace = std::chrono::duration_cast<Nanos>(std::chrono::seconds(5));  // SIGTERM -> SIGKILL
};

// A job running in its own process group, so that a signal reaches the job and all its children
// (data loader workers, torchrun ranks) and never wattwise itself.
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
  // grace period, and timed_out() is true. Returns exit_code(). Safe to call again after it returned.
  int wait(const WaitOptions& options = {});
  // Non-blocking: true (and the status is known) if the job has ended.
  bool poll();

  // Sends `signal_number` to the job's whole process group; a no-op once the job has been reaped.
  void forward_signal(int signal_number);

  // The job's exit code, or 128+N when it was killed by signal N (as shells report it).
  int exit_code() const { return exit_code_; }
  std::optional<int> signal() const { return signal_; }
  bool timed_out() const { return timed_out_; }

 private:
  explicit Process(pid_t pid) : pid_(pid) {}
  void record_status(int wait_status);
  void kill_and_reap();
  bool wait_until(std::optional<Nanos> deadline);  // false at the deadline

  pid_t pid_ = -1;
  bool finished_ = false;
  int exit_code_ = -1;
  std::optional<int> signal_;
  bool timed_out_ = false;
};

}  // namespace wattwise::workload
