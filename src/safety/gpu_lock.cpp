// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/gpu_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::safety {
namespace {

std::optional<long> read_pid(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  if (n <= 0) return std::nullopt;
  std::string_view text(buffer, static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const auto pid = parse_integer<long>(text);
  return pid && *pid > 0 ? pid : std::nullopt;
}

}  // namespace

std::filesystem::path gpu_lock_path(const std::filesystem::path& state_dir, const std::string& uuid) {
  // UUIDs are "GPU-xxxxxxxx-..." already; anything else is replaced so the name stays a plain file name.
  std::string safe = uuid;
  for (char& c : safe) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return state_dir / fmt::format("gpu-{}.lock", safe);
}

GpuLock GpuLock::acquire(const std::filesystem::path& state_dir, const std::string& uuid) {
  const auto path = gpu_lock_path(state_dir, uuid);
  // O_NOFOLLOW: a link planted under the lock's name must never make us (often root) write another file.
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ELOOP) {
      throw environment_error(fmt::format(
          "lock file {} for GPU {} is a symbolic link: refused; delete it, and keep the state directory "
          "writable only by you (WATTWISE_STATE_DIR)",
          path.string(), uuid));
    }
    throw environment_error(
        fmt::format("cannot open lock file {} for GPU {}: {}: set WATTWISE_STATE_DIR to a "
                    "writable directory",
                    path.string(), uuid, std::strerror(errno)));
  }
  // A hard link to another file, or a file someone else made, is not our lock file: writing our PID into it
  // would overwrite that file.
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_nlink != 1 || info.st_uid != ::geteuid()) {
    ::close(fd);
    throw environment_error(
        fmt::format("lock file {} for GPU {} is not a plain file of this user (a link, or made by user {}): "
                    "refused; delete it, and keep the state directory writable only by you",
                    path.string(), uuid, info.st_uid));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const auto holder = read_pid(fd);
    ::close(fd);
    if (error == EWOULDBLOCK) {
      throw environment_error(fmt::format(
          "GPU {} is being changed by another wattwise (PID {}): wait for it to finish or stop it", uuid,
          holder ? std::to_string(*holder) : std::string("unknown")));
    }
    throw environment_error(
        fmt::format("cannot lock {} for GPU {}: {}", path.string(), uuid, std::strerror(error)));
  }
  // Only the holder writes its PID, so the text is never a mix of two writers.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock itself is held; only the message of a refused second process would lack the PID.
  }
  return GpuLock(fd, uuid);
}

GpuLock::GpuLock(GpuLock&& other) noexcept : fd_(other.fd_), uuid_(std::move(other.uuid_)) {
  other.fd_ = -1;
}

GpuLock& GpuLock::operator=(GpuLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    uuid_ = std::move(other.uuid_);
    other.fd_ = -1;
  }
  return *this;
}

GpuLock::~GpuLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor of the open file releases the flock
}

std::optional<long> gpu_lock_holder(const std::filesystem::path& state_dir, const std::string& uuid) {
  int fd = ::open(gpu_lock_path(state_dir, uuid).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<long> holder;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    holder = read_pid(fd).value_or(0);
  } else {
    ::flock(fd, LOCK_UN);
  }
  ::close(fd);
  return holder;
}

}  // namespace wattwise::safety
