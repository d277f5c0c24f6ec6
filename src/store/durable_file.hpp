#pragma once

#include <filesystem>
#include <string_view>

namespace wattwise::store {

// Writes `content` to `path` so that `path` is either absent (or as before) or complete: the bytes go to a
// temporary file in the same directory, every write is checked, the file is fsync'ed and closed (errors
// checked: a full disk may only show there), then renamed over `path` and the directory fsync'ed. On any
// failure the temporary file is removed and an environment error (exit 3) says what happened, e.g.
// "disk full writing DIR/run-0003.csv: free space and continue with --resume".
void write_file_durably(const std::filesystem::path& path, std::string_view content);

}  // namespace wattwise::store
