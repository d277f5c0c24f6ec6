#include "cli/settings_path.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "daemon/client.hpp"
#include "safety/state_dir.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::cli {

std::shared_ptr<const safety::SettingsAccess> settings_access_for(hw::ControllableGpuSystem& gpus,
                                                                  bool no_daemon, const std::string& values_flag) {
  if (::geteuid() == 0)
    return std::make_shared<safety::LocalSettingsAccess>(gpus, safety::state_dir(),
                                                         safety::WatchdogLaunch::exec_self());
  const auto socket = daemon::default_socket_path();
  if (no_daemon) {
    throw environment_error(fmt::format(
        "changing GPU settings needs root, and --no-daemon refuses the wattwise daemon: run as root, or "
        "drop --no-daemon to change them through the daemon{}",
        daemon::daemon_socket_exists(socket) ? fmt::format(" at {}", socket.string()) : std::string()));
  }
  if (!daemon::daemon_socket_exists(socket)) {
    throw environment_error(fmt::format(
        "changing GPU settings needs root or the wattwise daemon, and no daemon listens at {}: run as root, "
        "ask the administrator to install it (docs/operators.md), or set WATTWISE_DAEMON_SOCKET to its socket",
        socket.string()));
  }
  return std::make_shared<daemon::DaemonSettingsAccess>(socket, values_flag);
}

}  // namespace wattwise::cli
