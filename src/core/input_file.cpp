#include "core/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise {

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

namespace {

Error not_regular(const std::filesystem::path& path, mode_t mode, std::string_view what) {
  return usage_error(
      fmt::format("'{}' is {}, not a regular file: give {}", path.string(), file_kind(mode), what));
}

// Opens `path` for reading only once it is known to be a regular file: first with O_PATH (which opens no
// device and cannot wait for a FIFO's writer), checked by fstat, then the same inode for reading through
// /proc/self/fd, so that a path swapped in between is not the file read. -1 with errno when it cannot be
// opened; a usage error when it is not a regular file.
int open_regular(const std::filesystem::path& path, std::string_view what, FollowLinks follow) {
  const int flags = O_PATH | O_NONBLOCK | O_CLOEXEC | (follow == FollowLinks::kNo ? O_NOFOLLOW : 0);
  const int handle = ::open(path.c_str(), flags);
  if (handle < 0) return -1;
  struct stat info {};
  if (::fstat(handle, &info) != 0 || !S_ISREG(info.st_mode)) {
    const mode_t mode = info.st_mode;
    ::close(handle);
    throw not_regular(path, mode, what);
  }
  const std::string through = "/proc/self/fd/" + std::to_string(handle);
  int fd = ::open(through.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) fd = ::open(path.c_str(), flags & ~O_PATH);  // no /proc: the path again
  const int error_number = errno;
  ::close(handle);
  errno = error_number;
  return fd;
}

}  // namespace

void require_regular_file(const std::filesystem::path& path, std::string_view what) {
  const int handle = ::open(path.c_str(), O_PATH | O_NONBLOCK | O_CLOEXEC);
  if (handle < 0) return;  // the caller's own open says why, in its words
  struct stat info {};
  const bool regular = ::fstat(handle, &info) == 0 && S_ISREG(info.st_mode);
  ::close(handle);
  if (!regular) throw not_regular(path, info.st_mode, what);
}

std::string read_regular_file(const std::filesystem::path& path, std::size_t max_bytes, std::string_view what,
                              FollowLinks follow) {
  const int fd = open_regular(path, what, follow);
  if (fd < 0)
    throw environment_error(fmt::format("cannot read '{}' ({}): check the path and its permissions",
                                        path.string(), std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {  // the same inode: cannot fail but for a race
    const mode_t mode = info.st_mode;
    ::close(fd);
    throw not_regular(path, mode, what);
  }
  const auto too_large = [&] {
    ::close(fd);
    return data_error(fmt::format("'{}' is larger than {} MiB, far more than {} ever is: it is not one",
                                  path.string(), max_bytes >> 20, what));
  };
  if (static_cast<std::size_t>(info.st_size) > max_bytes) throw too_large();
  std::string text;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error_number = errno;
      ::close(fd);
      throw environment_error(
          fmt::format("cannot read '{}' ({}): check the file", path.string(), std::strerror(error_number)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) throw too_large();  // it grew while read
  }
  ::close(fd);
  return text;
}

nlohmann::json parse_json_limited(std::string_view text, const std::string& source, int max_depth) {
  const nlohmann::json::parser_callback_t limit_depth = [&](int depth, nlohmann::json::parse_event_t event,
                                                            nlohmann::json&) {
    if (depth >= max_depth && (event == nlohmann::json::parse_event_t::object_start ||
                               event == nlohmann::json::parse_event_t::array_start))
      throw data_error(
          fmt::format("{}: JSON nested deeper than {} levels: no wattwise file is", source, max_depth));
    return true;
  };
  try {
    return nlohmann::json::parse(text.begin(), text.end(), limit_depth);
  } catch (const nlohmann::json::exception& e) {
    throw data_error(fmt::format("{}: not valid JSON ({})", source, e.what()));
  }
}

}  // namespace wattwise
