#pragma once

#include <memory>
#include <string>

#include "safety/settings_access.hpp"

namespace wattwise::cli {

// The path that changes GPU settings for `sweep`, `tune` and `measure --power-limit` (the SLURM node agent),
// chosen before the job starts (docs/operators.md "Who changes the settings"):
//   - root: this process, through the GPU locks, its journal and its watchdog (state_dir(), exec_self()),
//     on `gpus`' controls: a command that has only a read-only view of the GPUs cannot ask for a path;
//   - not root, with a daemon socket at daemon::default_socket_path(): the settings daemon;
//   - not root with --no-daemon, or without a daemon socket: an environment_error, one line that says what
//     to do. Nothing has been touched then.
// Through the daemon, validate() asks it about every value up front; a refusal names `values_flag` as the
// values' source (empty: the knob's own flag, --power-limit, --sm-clock or --mem-clock).
std::shared_ptr<const safety::SettingsAccess> settings_access_for(hw::ControllableGpuSystem& gpus,
                                                                  bool no_daemon,
                                                                  const std::string& values_flag = {});

// The flag's help text, the same for the three commands.
inline constexpr const char* kNoDaemonHelp =
    "never change GPU settings through the wattwise daemon: as a user who is not root, refuse to start "
    "(docs/operators.md)";

}  // namespace wattwise::cli
