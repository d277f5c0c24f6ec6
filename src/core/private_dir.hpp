#pragma once

// Fresh directories that only this user can enter (mkdtemp: mode 0700), for what wattwise shares with a
// job or keeps for one run: the marker and window sockets, the tuner's state file, a simulated sweep's
// journal. The one way src/ makes one; tests use wattwise::testing::TempDir (tests/support/temp_dir.hpp).
#include <filesystem>
#include <string_view>

namespace wattwise {

// A new directory `prefix`-XXXXXX under `base`. environment_error when it cannot be made: "cannot create
// WHAT in BASE: REASON (set TMPDIR to a writable directory)".
std::filesystem::path make_private_directory(const std::filesystem::path& base, std::string_view prefix,
                                             std::string_view what);

// Where a directory of Unix sockets goes: $TMPDIR when a socket path under it still fits sun_path (~107
// bytes: a $TMPDIR shorter than 60), else /tmp.
std::filesystem::path socket_directory_base();

// A private directory under the temporary directory (std::filesystem::temp_directory_path()), removed with
// its tree when destroyed.
class PrivateDir {
 public:
  // `prefix` names the directory ("wattwise-tune"), `what` the error (as make_private_directory's).
  PrivateDir(std::string_view prefix, std::string_view what);
  ~PrivateDir();
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace wattwise
