#include "store/durable_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace wattwise::store {
namespace {

Error write_failure(const std::filesystem::path& path, int error_number) {
  if (error_number == ENOSPC || error_number == EDQUOT || error_number == EFBIG) {
    return environment_error(fmt::format("disk full writing {} ({}): free space and continue with --resume",
                                         path.string(), std::strerror(error_number)));
  }
  return environment_error(
      fmt::format("cannot write {} ({}): check the directory, then continue with --resume", path.string(),
                  std::strerror(error_number)));
}

void write_all(int fd, std::string_view content, const std::filesystem::path& path) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw write_failure(path, errno);
    }
    content.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

void write_file_durably(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  const std::filesystem::path temp =
      dir / fmt::format(".{}.tmp-{}", path.filename().string(), static_cast<long>(::getpid()));
  // O_NOFOLLOW and O_EXCL: a planted link or file at the temporary name is refused, never written through.
  ::unlink(temp.c_str());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw write_failure(path, errno);
  try {
    write_all(fd, content, path);
    if (::fsync(fd) != 0) throw write_failure(path, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(temp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const int error_number = errno;
    ::unlink(temp.c_str());
    throw write_failure(path, error_number);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error_number = errno;
    ::unlink(temp.c_str());
    throw write_failure(path, error_number);
  }
  // The rename is durable only once the directory is: without this a power loss could keep the old name.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    const int rc = ::fsync(dir_fd);
    const int error_number = errno;
    ::close(dir_fd);
    if (rc != 0 && error_number != EINVAL) throw write_failure(path, error_number);
  }
}

}  // namespace wattwise::store
