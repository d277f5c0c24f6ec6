// HAZARD ZONE (the guardian). A mistake here leaves the job orphaned when wattwise itself is killed. Before a
// change here lands, run test_workload, test_safety and `ctest -L faults` (Release build;
// docs/architecture.md "Hazard zones").

#include "workload/job_guardian.hpp"

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace wattwise::workload {
namespace {

// One message per datagram (SOCK_SEQPACKET keeps them apart and still gives end-of-file).
struct Message {
  char kind;  // kGroup, kProcess, kForget, kDismiss
  int32_t pid;
};
constexpr char kGroup = 'G';
constexpr char kProcess = 'P';
constexpr char kForget = 'F';
constexpr char kDismiss = 'D';
constexpr int kMaxEscaped = 256;  // descendants outside the group it remembers; more are not guarded

void send_message(int fd, char kind, pid_t pid) {
  const Message message{kind, static_cast<int32_t>(pid)};
  ssize_t sent;
  do {
    sent = ::send(fd, &message, sizeof message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
}

// Async-signal-safe text output: no stdio in the forked child.
void write_text(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}
void write_number(long value) {
  char digits[24];
  int n = 0;
  if (value == 0) digits[n++] = '0';
  while (value > 0 && n < 23) {
    digits[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  char text[24];
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  text[n] = '\0';
  write_text(text);
}

[[noreturn]] void guard(int fd) {
  pid_t group = 0;
  pid_t escaped[kMaxEscaped];
  int escaped_count = 0;
  for (;;) {
    Message message{};
    const ssize_t got = ::recv(fd, &message, sizeof message, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got == static_cast<ssize_t>(sizeof message)) {
      if (message.kind == kDismiss) ::_exit(0);
      if (message.kind == kGroup) group = message.pid;
      if (message.kind == kProcess && escaped_count < kMaxEscaped) escaped[escaped_count++] = message.pid;
      if (message.kind == kForget) {
        for (int i = 0; i < escaped_count; ++i)
          if (escaped[i] == message.pid) escaped[i--] = escaped[--escaped_count];
      }
      continue;
    }
    break;  // end-of-file (or an error): wattwise is gone without dismissing us
  }
  if (group <= 0 && escaped_count == 0) ::_exit(0);  // the job never started
  int killed = 0;
  if (group > 0 && ::kill(-group, SIGKILL) == 0) ++killed;
  for (int i = 0; i < escaped_count; ++i) {
    ::kill(-escaped[i], SIGKILL);  // its own group, if it leads one (setsid)
    if (::kill(escaped[i], SIGKILL) == 0) ++killed;
  }
  if (killed > 0) {
    write_text("wattwise guardian: wattwise ended while its job ran: killed the job (process group ");
    write_number(group);
    if (escaped_count > 0) {
      write_text(" and ");
      write_number(escaped_count);
      write_text(" processes that left it");
    }
    write_text(")\n");
  }
  ::_exit(0);
}

}  // namespace

JobGuardian::JobGuardian() {
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0)
    throw environment_error(std::string("cannot create the job guardian's socket pair: ") +
                            std::strerror(errno));
  // Signals blocked around fork(): wattwise's stop-signal handler must never run in the guardian.
  sigset_t all, previous;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
  const pid_t pid = ::fork();
  if (pid != 0) ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) {
    const int error_number = errno;
    ::close(ends[0]);
    ::close(ends[1]);
    throw environment_error(std::string("cannot start the job guardian (fork failed): ") +
                            std::strerror(error_number));
  }
  if (pid == 0) {
    ::close(ends[0]);  // or our own copy of wattwise's end would keep the socket from reaching EOF
    ::setsid();
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(signal_number, SIG_IGN);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Every other inherited descriptor closed (wattwise's end of the settings watchdog's socket, GPU
    // locks, output pipes), so the guardian never delays anyone's end-of-file. stdio stays for messages.
    if (ends[1] > 3) ::close_range(3, static_cast<unsigned>(ends[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(ends[1]) + 1, ~0U, 0);
    guard(ends[1]);
  }
  ::close(ends[1]);
  pid_ = pid;
  end_ = ends[0];
}

JobGuardian::~JobGuardian() {
  dismiss();
}

void JobGuardian::announce_group_from_child(int socket_fd, pid_t process_group) {
  const Message message{kGroup, static_cast<int32_t>(process_group)};
  const ssize_t ignored = ::send(socket_fd, &message, sizeof message, MSG_NOSIGNAL);
  (void)ignored;
}

void JobGuardian::guard_group(pid_t process_group) {
  if (end_ >= 0) send_message(end_, kGroup, process_group);
}
void JobGuardian::guard_process(pid_t pid) {
  if (end_ >= 0) send_message(end_, kProcess, pid);
}
void JobGuardian::forget_process(pid_t pid) {
  if (end_ >= 0) send_message(end_, kForget, pid);
}

void JobGuardian::dismiss() {
  if (end_ < 0) return;
  send_message(end_, kDismiss, 0);
  ::close(end_);
  end_ = -1;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace wattwise::workload
