#include "workload/marker_receiver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "workload/marker_codec.hpp"

namespace wattwise::workload {
namespace {

// Big enough for a marker with dozens of counters; longer datagrams are truncated and then malformed.
constexpr size_t kMaxDatagramBytes = 8192;
// Room for bursts (a marker per iteration from many ranks) while the thread is descheduled.
constexpr int kReceiveBufferBytes = 4 << 20;

std::string system_message(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// A sun_path holds ~107 bytes; a long $TMPDIR would not fit, so fall back to /tmp.
std::filesystem::path make_private_directory() {
  std::string base = "/tmp";
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir && std::strlen(tmpdir) < 60) {
    base = tmpdir;
  }
  std::string pattern = base + "/wattwise-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw environment_error(system_message("cannot create the marker directory in " + base) +
                            " (set TMPDIR to a writable directory)");
  }
  ::chmod(pattern.c_str(), 0700);  // mkdtemp already uses 0700; say so explicitly against odd umasks
  return pattern;
}

}  // namespace

MarkerReceiver::MarkerReceiver() {
  directory_ = make_private_directory();
  socket_path_ = directory_ / "markers.sock";
  try {
    socket_fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (socket_fd_ < 0) throw environment_error(system_message("cannot create the marker socket"));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_path_.c_str(), sizeof(address.sun_path) - 1);
    if (::bind(socket_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
      throw environment_error(system_message("cannot bind the marker socket " + socket_path_.string()));
    }
    int buffer_bytes = kReceiveBufferBytes;
    // Best effort: the kernel caps it at net.core.rmem_max, which is fine.
    ::setsockopt(socket_fd_, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw environment_error(system_message("cannot create a pipe"));
  } catch (...) {
    if (socket_fd_ >= 0) ::close(socket_fd_);
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    throw;
  }
  thread_ = std::thread([this] { receive_loop(); });
}

MarkerReceiver::~MarkerReceiver() {
  stop();
  ::close(socket_fd_);
  ::close(stop_pipe_[0]);
  ::close(stop_pipe_[1]);
  std::error_code ignored;  // a destructor must not throw; a leftover empty directory in /tmp is harmless
  std::filesystem::remove_all(directory_, ignored);
}

void MarkerReceiver::stop() {
  if (stopped_) return;
  stopped_ = true;
  char byte = 1;
  while (::write(stop_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<Marker> MarkerReceiver::markers() const {
  std::lock_guard lock(mutex_);
  return markers_;
}

void MarkerReceiver::receive_loop() {
  pollfd fds[2] = {{socket_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  for (;;) {
    int ready = ::poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen with valid descriptors; stop receiving rather than spin
    }
    while (receive_one()) {
    }
    if (fds[1].revents != 0) {
      // Markers sent just before the job exited may still be queued: take them all before leaving.
      while (receive_one()) {
      }
      return;
    }
  }
}

bool MarkerReceiver::receive_one() {
  char buffer[kMaxDatagramBytes];
  ssize_t length = ::recv(socket_fd_, buffer, sizeof(buffer), MSG_TRUNC);
  if (length < 0) return errno == EINTR;
  if (static_cast<size_t>(length) > sizeof(buffer)) {
    ++malformed_count_;
    return true;
  }
  auto marker = decode_marker(std::string_view(buffer, static_cast<size_t>(length)));
  if (!marker) {
    ++malformed_count_;
    return true;
  }
  std::lock_guard lock(mutex_);
  markers_.push_back(std::move(*marker));
  return true;
}

}  // namespace wattwise::workload
