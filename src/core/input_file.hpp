#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

// Reading files that a user names or that others may have planted (a shared SLURM directory, a config file):
// a FIFO must not hang the command, a link to /dev/zero must not fill memory, deep JSON must not overflow
// the stack.
namespace wattwise {

// What kind of file a stat mode is, in words: "a FIFO", "a character device", "a directory", ...
std::string file_kind(mode_t mode);

// A usage error unless `path` (links followed) is a regular file, e.g. "'f.db' is a FIFO, not a regular
// file: give a sweep database or a runs CSV" when `what` is "a sweep database or a runs CSV". A path that
// does not exist passes: the caller's own open says so in its words.
void require_regular_file(const std::filesystem::path& path, std::string_view what);

enum class FollowLinks { kYes, kNo };

// The whole of a regular file of at most `max_bytes`. The check is made on the descriptor that is read
// (opened with O_NONBLOCK, so a FIFO cannot hang the open; with kNo, O_NOFOLLOW): usage_error for what is
// not a regular file, data_error past `max_bytes`, environment_error when it cannot be opened or read.
std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what,
                              FollowLinks follow = FollowLinks::kYes);

// JSON nested at most `max_depth` arrays and objects deep (nlohmann's parser callback stops a deeper one
// before it is built). Throws data_error "SOURCE: not valid JSON (...)" or "SOURCE: JSON nested deeper than
// N levels".
nlohmann::json parse_json_limited(std::string_view text, const std::string& source, int max_depth = 64);

}  // namespace wattwise
