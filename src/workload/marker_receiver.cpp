#include "workload/marker_receiver.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numbers.hpp"
#include "core/private_dir.hpp"
#include "core/thread_name.hpp"
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

// Others may pass through (not list): a job that changed user (`sudo -u`, setuid) must reach the
// changed-user socket. Who is heard is decided per datagram from the kernel's credentials (admit()).
std::filesystem::path make_marker_directory() {
  std::filesystem::path directory =
      make_private_directory(socket_directory_base(), "wattwise", "the marker directory");
  ::chmod(directory.c_str(), 0711);
  return directory;
}

// The parent of `pid` from /proc/PID/stat ("pid (comm) state ppid ..."; comm may hold spaces and ')').
std::optional<pid_t> parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return std::nullopt;
  const std::string_view rest = std::string_view(stat).substr(close + 4);
  return parse_integer<pid_t>(rest.substr(0, rest.find(' ')));
}

// A datagram socket bound at `path` with mode `mode`, asking for its senders' credentials.
int bind_marker_socket(const std::filesystem::path& path, mode_t mode) {
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw environment_error(system_message("cannot create the marker socket"));
  try {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
      throw environment_error(system_message("cannot bind the marker socket " + path.string()));
    // The kernel attaches each sender's pid and uid, which a sender without privileges cannot fake.
    int pass_credentials = 1;
    if (::setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &pass_credentials, sizeof(pass_credentials)) != 0)
      throw environment_error(system_message("cannot ask for the marker senders' credentials"));
    if (::chmod(path.c_str(), mode) != 0)
      throw environment_error(system_message("cannot open the marker socket " + path.string()));
    int buffer_bytes = kReceiveBufferBytes;
    // Best effort: the kernel caps it at net.core.rmem_max, which is fine.
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

}  // namespace

MarkerReceiver::MarkerReceiver() {
  directory_ = make_marker_directory();
  const auto job_directory = directory_ / "job";
  socket_path_ = job_directory / "markers.sock";
  changed_user_socket_path_ = directory_ / "changed-user.sock";
  try {
    // Only this user (and root) can enter: no other user can reach the job's socket, so none can fill
    // its queue and make the job's clients drop markers.
    if (::mkdir(job_directory.c_str(), 0700) != 0)
      throw environment_error(system_message("cannot create " + job_directory.string()));
    socket_fd_ = bind_marker_socket(socket_path_, 0600);
    // Anyone may send here; admit() refuses, with a count and a reason, whoever is neither this user nor
    // one of this process's descendants (the job and whatever it started).
    changed_user_socket_fd_ = bind_marker_socket(changed_user_socket_path_, 0666);
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw environment_error(system_message("cannot create a pipe"));
  } catch (...) {
    if (socket_fd_ >= 0) ::close(socket_fd_);
    if (changed_user_socket_fd_ >= 0) ::close(changed_user_socket_fd_);
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
    throw;
  }
  thread_ = named_thread("ww-markers", [this] { receive_loop(); });
}

MarkerReceiver::~MarkerReceiver() {
  stop();
  ::close(socket_fd_);
  ::close(changed_user_socket_fd_);
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

std::vector<Marker> MarkerReceiver::markers_since(std::size_t first) const {
  std::lock_guard lock(mutex_);
  first = first > forgotten_ ? first - forgotten_ : 0;
  if (first >= markers_.size()) return {};
  return {markers_.begin() + static_cast<std::ptrdiff_t>(first), markers_.end()};
}

std::size_t MarkerReceiver::received_count() const {
  std::lock_guard lock(mutex_);
  return forgotten_ + markers_.size();
}

void MarkerReceiver::forget(std::size_t count, Nanos times_before) {
  std::lock_guard lock(mutex_);
  if (count > forgotten_) {
    const std::size_t drop = std::min(count - forgotten_, markers_.size());
    markers_.erase(markers_.begin(), markers_.begin() + static_cast<std::ptrdiff_t>(drop));
    forgotten_ += drop;
  }
  // The sorted part's times before `times_before` (the rest is sorted on the next marker_times_between).
  const auto sorted_end = marker_times_.begin() + static_cast<std::ptrdiff_t>(marker_times_sorted_);
  const auto old_end = std::lower_bound(marker_times_.begin(), sorted_end, times_before);
  const auto dropped = static_cast<std::size_t>(old_end - marker_times_.begin());
  marker_times_.erase(marker_times_.begin(), old_end);
  marker_times_sorted_ -= dropped;
}

void MarkerReceiver::receive_loop() {
  pollfd fds[3] = {{socket_fd_, POLLIN, 0}, {changed_user_socket_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
  // The job's own socket first: a flood on the other one delays it by one batch at most.
  const auto drain = [this] {
    while (receive_one(socket_fd_)) {
    }
    for (int batch = 0; batch < 64 && receive_one(changed_user_socket_fd_); ++batch) {
    }
  };
  for (;;) {
    int ready = ::poll(fds, 3, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;  // cannot happen with valid descriptors; stop receiving rather than spin
    }
    drain();
    if (fds[2].revents != 0) {
      // Markers sent just before the job exited may still be queued: take them all before leaving.
      while (receive_one(socket_fd_)) {
      }
      while (receive_one(changed_user_socket_fd_)) {
      }
      return;
    }
  }
}

bool MarkerReceiver::is_descendant(pid_t pid) {
  if (pid <= 0) return false;  // 0: the sender lives in another pid namespace
  if (admitted_pids_.contains(pid)) return true;
  const pid_t self = ::getpid();
  pid_t current = pid;
  for (int depth = 0; depth < 4096 && current > 1; ++depth) {
    const auto parent = parent_of(current);
    if (!parent) return false;  // gone already: cannot tell
    if (*parent == self) {
      admitted_pids_.insert(pid);  // checked once per sender; its later markers need no /proc walk
      return true;
    }
    current = *parent;
  }
  return false;
}

bool MarkerReceiver::admit(const ucred* sender) {
  if (sender != nullptr && (sender->uid == ::geteuid() || is_descendant(sender->pid))) return true;
  std::lock_guard lock(mutex_);
  ++refused_count_;
  if (refusal_reason_.empty()) {
    refusal_reason_ =
        sender == nullptr
            ? std::string("a datagram came without its sender's credentials")
            : fmt::format(
                  "sender pid {} (uid {}) is neither this user (uid {}) nor a process the job started",
                  sender->pid, sender->uid, ::geteuid());
  }
  return false;
}

bool MarkerReceiver::receive_one(int fd) {
  char buffer[kMaxDatagramBytes];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
  iovec io{buffer, sizeof(buffer)};
  msghdr message{};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  ssize_t length = ::recvmsg(fd, &message, MSG_TRUNC | MSG_CMSG_CLOEXEC);
  if (length < 0) return errno == EINTR;
  const ucred* sender = nullptr;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
        c->cmsg_len >= CMSG_LEN(sizeof(ucred)))
      sender = reinterpret_cast<const ucred*>(CMSG_DATA(c));
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {  // descriptors nobody asked for
      const auto* fds = reinterpret_cast<const int*>(CMSG_DATA(c));
      for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) ::close(fds[i]);
    }
  }
  if (!admit(sender)) return true;
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
  marker_times_.push_back(marker->t);
  markers_.push_back(std::move(*marker));
  return true;
}

std::vector<Nanos> MarkerReceiver::marker_times_between(Nanos from, Nanos to) {
  std::lock_guard lock(mutex_);
  const auto begin = marker_times_.begin();
  const auto tail = begin + static_cast<std::ptrdiff_t>(marker_times_sorted_);
  std::sort(tail, marker_times_.end());
  // Usually the new ones all come after the old: nothing to merge. A marker stamped earlier (another
  // process's, or a hostile one) costs one linear merge.
  if (tail != begin && tail != marker_times_.end() && *tail < *(tail - 1))
    std::inplace_merge(begin, tail, marker_times_.end());
  marker_times_sorted_ = marker_times_.size();
  if (to < from) return {};
  return {std::lower_bound(marker_times_.begin(), marker_times_.end(), from),
          std::upper_bound(marker_times_.begin(), marker_times_.end(), to)};
}

int MarkerReceiver::refused_count() const {
  std::lock_guard lock(mutex_);
  return refused_count_;
}

std::string MarkerReceiver::refusal_reason() const {
  std::lock_guard lock(mutex_);
  return refusal_reason_;
}

}  // namespace wattwise::workload
