#pragma once

#include <sys/types.h>

#include <filesystem>

namespace wattwise::safety {

// Where the settings journal and the per-GPU lock files live:
//   $WATTWISE_STATE_DIR, else /var/lib/wattwise when running as root, else $XDG_STATE_HOME/wattwise,
//   else ~/.local/state/wattwise. (Documented in docs/safety.md.)
std::filesystem::path state_dir();

// Creates the directory (and parents) if needed, then check_state_dir; environment_error saying how to
// choose another one.
void ensure_state_dir(const std::filesystem::path& dir);

// Refuses (environment_error naming the fix) a state directory that another user could plant files in:
// owned by a user other than this one or root, or writable by group or others without the sticky bit.
// Together with O_NOFOLLOW and O_EXCL on every file in it, a planted link can never make root overwrite
// another file.
void check_state_dir(const std::filesystem::path& dir);
// The rule itself, on an owner and a mode (testable without another user).
void check_state_dir_ownership(const std::filesystem::path& dir, uid_t owner, mode_t mode, uid_t euid);

}  // namespace wattwise::safety
