// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/watchdog.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"

namespace wattwise::safety {
namespace {

constexpr char kDismiss = 'D';

// In the child between fork and exec (or before the in-process watchdog runs): only async-signal-safe calls.
void detach_from_wattwise() {
  // Ignore first, then leave the session: whoever sees the new session may already send a Ctrl-C to it.
  // SIGTERM too: SLURM ends a job step by sending SIGTERM to every process of the step (the watchdog of a
  // sweep's node agent is one), then SIGKILL after KillWait; ignoring it keeps the watchdog alive to
  // restore in that window if the agent is killed first. It still exits by itself: dismissed, or after
  // restoring when wattwise is gone.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  ::setsid();
  // wattwise may block signals (its signal thread); the watchdog must not inherit that mask across exec.
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

struct SocketPair {
  int parent = -1;
  int child = -1;
};

SocketPair make_socket_pair() {
  // A socket pair rather than a pipe: the same end-of-file when the other side dies, but send() with
  // MSG_NOSIGNAL cannot kill wattwise with SIGPIPE if the watchdog has died first.
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    throw environment_error(
        fmt::format("cannot create the watchdog's socket pair: {}", std::strerror(errno)));
  }
  return {ends[0], ends[1]};
}

Error fork_failure(int error) {
  return environment_error(
      fmt::format("cannot start the settings watchdog (fork: {}): refusing to change GPU settings without it",
                  std::strerror(error)));
}

}  // namespace

WatchdogLaunch WatchdogLaunch::exec_self() {
  WatchdogLaunch launch;
  launch.exec_binary = "/proc/self/exe";
  return launch;
}

int run_watchdog(int fd, const GpuSystemFactory& factory, const std::filesystem::path& journal_path) {
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1 && byte == kDismiss) return 0;  // clean end: wattwise restored (or will) by itself

  // End-of-file (or an error on the socket): wattwise is gone without dismissing us.
  if (!std::filesystem::exists(journal_path)) return 0;
  try {
    auto system = factory();
    const RestoreReport report = restore_from_journal_file(*system, journal_path);
    if (report.all_ok()) {
      std::fprintf(stderr, "wattwise watchdog: wattwise ended without restoring; restored:\n%s",
                   report.summary().c_str());
      return 0;
    }
    std::fprintf(stderr, "wattwise watchdog: wattwise ended without restoring; restore incomplete:\n%s",
                 report.summary().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattwise watchdog: restore failed: %s; journal %s kept: run `wattwise restore`\n",
                 e.what(), journal_path.c_str());
  }
  return 1;
}

Watchdog::Watchdog(const WatchdogLaunch& launch, std::filesystem::path journal_path,
                   std::vector<int> keep_fds) {
  if (!launch.exec_binary.empty()) {
    SocketPair ends = make_socket_pair();
    // Everything the child needs is built before fork: after it, only async-signal-safe calls.
    std::vector<std::string> args{
        "wattwise", "restore", "--watchdog", std::to_string(ends.child), "--journal", journal_path.string()};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    // Tells the parent whether exec worked: close-on-exec, so a successful exec closes it (end-of-file); a
    // failed one writes errno into it.
    int status_pipe[2];
    if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
      const int error = errno;
      ::close(ends.parent);
      ::close(ends.child);
      throw fork_failure(error);
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      for (int fd : {ends.parent, ends.child, status_pipe[0], status_pipe[1]}) ::close(fd);
      throw fork_failure(error);
    }
    if (pid == 0) {
      ::close(ends.parent);  // or our own copy of wattwise's end would keep the socket from reaching EOF
      ::close(status_pipe[0]);
      detach_from_wattwise();
      ::fcntl(ends.child, F_SETFD, 0);
      for (int fd : keep_fds) ::fcntl(fd, F_SETFD, 0);
      ::execv(launch.exec_binary.c_str(), argv.data());
      const int error = errno;
      [[maybe_unused]] const ssize_t ignored = ::write(status_pipe[1], &error, sizeof error);
      ::_exit(127);
    }
    ::close(ends.child);
    ::close(status_pipe[1]);
    int exec_error = 0;
    ssize_t got = 0;
    do {
      got = ::read(status_pipe[0], &exec_error, sizeof exec_error);
    } while (got < 0 && errno == EINTR);
    ::close(status_pipe[0]);
    if (got > 0) {
      ::close(ends.parent);
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      throw environment_error(fmt::format(
          "cannot start the settings watchdog (exec {}: {}): refusing to change GPU settings without it",
          launch.exec_binary.string(), std::strerror(exec_error)));
    }
    pid_ = pid;
    parent_end_ = ends.parent;
    return;
  }

  // The in-process seam: the forked child runs the watchdog itself.
  SocketPair ends = make_socket_pair();
  std::fflush(nullptr);  // or the child would write the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(ends.parent);
    ::close(ends.child);
    throw fork_failure(error);
  }
  if (pid == 0) {
    ::close(ends.parent);
    detach_from_wattwise();
    // _exit: no atexit handlers or static destructors of the parent's program run in the watchdog.
    ::_exit(run_watchdog(ends.child, launch.in_process, journal_path));
  }
  ::close(ends.child);
  pid_ = pid;
  parent_end_ = ends.parent;
}

Watchdog::Watchdog(GpuSystemFactory factory, std::filesystem::path journal_path)
    : Watchdog(WatchdogLaunch{{}, std::move(factory)}, std::move(journal_path)) {}

Watchdog::~Watchdog() {
  dismiss();
}

void Watchdog::hand_over() {
  if (parent_end_ < 0) return;
  ::close(parent_end_);  // end-of-file without the dismissal byte: the watchdog restores
  parent_end_ = -1;
}

void Watchdog::dismiss() {
  if (parent_end_ < 0) return;
  ::send(parent_end_, &kDismiss, 1, MSG_NOSIGNAL);
  ::close(parent_end_);
  parent_end_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace wattwise::safety
