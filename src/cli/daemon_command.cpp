// `wattwise daemon`: the settings daemon (daemon/server.hpp), run as root by systemd (docs/operators.md).
#include <unistd.h>

#include "cli/commands.hpp"
#include "cli/gpu_system.hpp"
#include "core/error.hpp"
#include "daemon/server.hpp"
#include "safety/state_dir.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::cli {

CommandRun add_daemon_command(CLI::App& app) {
  auto options = std::make_shared<daemon::DaemonOptions>();
  app.add_option("--socket", options->socket_path, "the Unix socket clients connect to")
      ->capture_default_str();
  app.add_option("--policy", options->policy_path, "the policy file (JSON; re-read on SIGHUP)")
      ->capture_default_str();
  return [options] {
    if (::geteuid() != 0)
      throw environment_error("the settings daemon runs as root (systemctl start wattwise-daemon); users "
                              "reach it through sweep and tune");
    options->state_dir = safety::state_dir();
    options->watchdog = safety::WatchdogLaunch::exec_self();
    auto system = open_real_gpus();
    daemon::Daemon server(*system, *options);
    server.serve();
    return 0;
  };
}

}  // namespace wattwise::cli
