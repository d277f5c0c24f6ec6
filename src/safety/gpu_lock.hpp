#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace wattwise::safety {

// Keeps a second wattwise from changing the same GPU at the same time: one lock file per GPU UUID in the
// state directory, held with flock(LOCK_EX) for the life of this object. The kernel drops the lock when the
// process dies, so a crash never leaves a GPU locked. The file descriptor is close-on-exec (the job does
// not inherit it) but a forked watchdog does, which keeps the GPU locked until it has restored it.
class GpuLock {
 public:
  // environment_error naming the GPU and the PID that holds it when another process has it. The lock file is
  // opened without following links and must be a plain file of this user (never a link to another file).
  static GpuLock acquire(const std::filesystem::path& state_dir, const std::string& uuid);

  GpuLock(GpuLock&& other) noexcept;
  GpuLock& operator=(GpuLock&& other) noexcept;
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;
  ~GpuLock();

  const std::string& uuid() const { return uuid_; }
  // The descriptor that holds the lock: the watchdog keeps it open across its exec, so the GPU stays locked
  // until it has restored it.
  int fd() const { return fd_; }

 private:
  GpuLock(int fd, std::string uuid) : fd_(fd), uuid_(std::move(uuid)) {}
  int fd_ = -1;
  std::string uuid_;
};

std::filesystem::path gpu_lock_path(const std::filesystem::path& state_dir, const std::string& uuid);

// The PID written by the process that holds this GPU's lock now; nullopt when nobody holds it.
std::optional<long> gpu_lock_holder(const std::filesystem::path& state_dir, const std::string& uuid);

}  // namespace wattwise::safety
