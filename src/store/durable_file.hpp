#pragma once

#include <filesystem>
#include <string_view>

namespace wattwise::store {

// Writes `content` to `path` atomically (core/atomic_file.hpp: `path` is either as before or complete).
// On any failure an environment error (exit 3) says what happened and that --resume continues, e.g.
// "disk full writing DIR/run-0003.csv: free space and continue with --resume".
void write_file_durably(const std::filesystem::path& path, std::string_view content);

}  // namespace wattwise::store
