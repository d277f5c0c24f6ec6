#include "safety/watchdog.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "safety/journal.hpp"
#include "safety/restore.hpp"

namespace wattwise::safety {
namespace {

constexpr char kDismiss = 'D';

// Returns the exit status of the watchdog process.
int watch(int child_end, const GpuSystemFactory& factory, const std::filesystem::path& journal_path) {
  char byte = 0;
  ssize_t n = 0;
  do {
    n = ::read(child_end, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1 && byte == kDismiss) return 0;  // clean end: wattwise restored (or will) by itself

  // End-of-file (or an error on the socket): wattwise is gone without dismissing us.
  if (!std::filesystem::exists(journal_path)) return 0;
  try {
    auto system = factory();
    RestoreReport report = restore_gpus(*system, read_journal(journal_path));
    if (report.all_ok()) {
      remove_journal(journal_path);
      std::fprintf(stderr, "wattwise watchdog: wattwise ended without restoring; restored:\n%s",
                   report.summary().c_str());
      return 0;
    }
    std::fprintf(stderr, "wattwise watchdog: restore incomplete, journal %s kept: run `wattwise restore`\n%s",
                 journal_path.c_str(), report.summary().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattwise watchdog: restore failed: %s; journal %s kept: run `wattwise restore`\n",
                 e.what(), journal_path.c_str());
  }
  return 1;
}

}  // namespace

Watchdog::Watchdog(GpuSystemFactory factory, std::filesystem::path journal_path) {
  // A socket pair rather than a pipe: the same end-of-file when the other side dies, but send() with
  // MSG_NOSIGNAL cannot kill wattwise with SIGPIPE if the watchdog has died first.
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
    throw environment_error(
        fmt::format("cannot create the watchdog's socket pair: {}", std::strerror(errno)));
  }
  std::fflush(nullptr);  // or the child would write the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    throw environment_error(
        fmt::format("cannot start the settings watchdog (fork: {}): refusing to change GPU "
                    "settings without it",
                    std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(ends[0]);  // or our own copy of wattwise's end would keep the socket from ever reaching EOF
    ::setsid();
    ::signal(SIGINT, SIG_IGN);
    ::signal(SIGHUP, SIG_IGN);
    ::signal(SIGPIPE, SIG_IGN);
    // _exit: no atexit handlers or static destructors of the parent's program run in the watchdog.
    ::_exit(watch(ends[1], factory, journal_path));
  }
  ::close(ends[1]);
  pid_ = pid;
  parent_end_ = ends[0];
}

Watchdog::~Watchdog() {
  dismiss();
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
