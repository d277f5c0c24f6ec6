#include "workload/output_tail.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/thread_name.hpp"

namespace wattwise::workload {

namespace {

// How long the reader waits for more once the job ended before it stops: what the job wrote before its
// end is already in the pipe, so this only bounds a leftover holder of the write end.
constexpr int kQuietAfterEndMs = 100;

// Writes all of `data` to `fd`; false when the target is gone (EPIPE) or fails otherwise.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

OutputTee::OutputTee(int target_fd, std::size_t capacity) : target_fd_(target_fd), capacity_(capacity) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw environment_error(std::string("cannot create a pipe for the job's output: ") + std::strerror(errno));
  read_fd_ = fds[0];
  write_fd_ = fds[1];
  thread_ = named_thread("ww-output", [this] { pass_through(); });
}

OutputTee::~OutputTee() {
  if (thread_.joinable()) {
    close_write_end();
    finishing_ = true;
    thread_.join();
  }
  if (read_fd_ >= 0) ::close(read_fd_);
  close_write_end();
}

void OutputTee::close_write_end() {
  if (write_fd_ >= 0) ::close(write_fd_);
  write_fd_ = -1;
}

StreamTail OutputTee::finish() {
  close_write_end();
  finishing_ = true;
  if (thread_.joinable()) thread_.join();
  if (kept_.tail.size() > capacity_) kept_.tail.erase(0, kept_.tail.size() - capacity_);
  return kept_;
}

void OutputTee::pass_through() {
  // A reader of wattwise's output that went away must not end wattwise (SIGPIPE): this thread gets EPIPE.
  sigset_t pipe_signal;
  ::sigemptyset(&pipe_signal);
  ::sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
  bool target_open = true;
  char buffer[16384];
  for (;;) {
    pollfd p{read_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, finishing_ ? kQuietAfterEndMs : 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (finishing_) return;
      continue;
    }
    const ssize_t n = ::read(read_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // every writer closed its end: the job and all it started are gone
    const auto size = static_cast<std::size_t>(n);
    if (target_open) target_open = write_all(target_fd_, buffer, size);
    kept_.bytes += size;
    kept_.tail.append(buffer, size);
    if (kept_.tail.size() > 2 * capacity_) kept_.tail.erase(0, kept_.tail.size() - capacity_);
  }
}

}  // namespace wattwise::workload
