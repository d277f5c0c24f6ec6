#include "safety/state_dir.hpp"

#include <fmt/format.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
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

void ensure_state_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw environment_error(
        fmt::format("cannot create state directory {}: {}: set WATTWISE_STATE_DIR to a writable "
                    "directory",
                    dir.string(), ec.message()));
  }
}

}  // namespace wattwise::safety
