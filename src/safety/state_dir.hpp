#pragma once

#include <filesystem>

namespace wattwise::safety {

// Where the settings journal and the per-GPU lock files live:
//   $WATTWISE_STATE_DIR, else /var/lib/wattwise when running as root, else $XDG_STATE_HOME/wattwise,
//   else ~/.local/state/wattwise. (Documented in docs/safety.md.)
std::filesystem::path state_dir();

// Creates the directory (and parents) if needed; environment_error saying how to choose another one.
void ensure_state_dir(const std::filesystem::path& dir);

}  // namespace wattwise::safety
