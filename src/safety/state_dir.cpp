// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/state_dir.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "core/error.hpp"

namespace wattwise::safety {
namespace {

const char* non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return (value != nullptr && *value != '\0') ? value : nullptr;
}

}  // namespace

std::filesystem::path state_dir() {
  if (const char* dir = non_empty_env("WATTWISE_STATE_DIR")) return dir;
  if (geteuid() == 0) return "/var/lib/wattwise";
  if (const char* xdg = non_empty_env("XDG_STATE_HOME")) return std::filesystem::path(xdg) / "wattwise";
  const char* home = non_empty_env("HOME");
  if (home == nullptr) {
    const passwd* entry = getpwuid(geteuid());
    if (entry != nullptr) home = entry->pw_dir;
  }
  if (home == nullptr) {
    throw environment_error(
        "cannot find a state directory (no HOME): set WATTWISE_STATE_DIR to a writable directory");
  }
  return std::filesystem::path(home) / ".local" / "state" / "wattwise";
}

void check_state_dir_ownership(const std::filesystem::path& dir, uid_t owner, mode_t mode, uid_t euid) {
  if (owner != euid && owner != 0) {
    throw environment_error(fmt::format(
        "state directory {} belongs to user {}, not to this user ({}): its owner could plant files that "
        "wattwise would write or apply; use a directory of your own (WATTWISE_STATE_DIR), or `chown {} {}`",
        dir.string(), owner, euid, euid, dir.string()));
  }
  if ((mode & (S_IWGRP | S_IWOTH)) != 0 && (mode & S_ISVTX) == 0) {
    throw environment_error(fmt::format(
        "state directory {} is writable by other users (mode {:o}) without the sticky bit: they could "
        "replace "
        "its journal and lock files; run `chmod go-w {}` (or `chmod +t`), or set WATTWISE_STATE_DIR to a "
        "directory of your own",
        dir.string(), mode & 07777, dir.string()));
  }
}

void check_state_dir(const std::filesystem::path& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) {
    throw environment_error(
        fmt::format("cannot use state directory {}: {}: set WATTWISE_STATE_DIR to a "
                    "writable directory",
                    dir.string(), std::strerror(errno)));
  }
  if (!S_ISDIR(info.st_mode)) {
    throw environment_error(
        fmt::format("state directory {} is not a directory: set WATTWISE_STATE_DIR to one", dir.string()));
  }
  check_state_dir_ownership(dir, info.st_uid, info.st_mode, ::geteuid());
}

void ensure_state_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw environment_error(
        fmt::format("cannot create state directory {}: {}: set WATTWISE_STATE_DIR to a writable "
                    "directory",
                    dir.string(), ec.message()));
  }
  check_state_dir(dir);
}

}  // namespace wattwise::safety
