#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace wattwise {
namespace {

constexpr std::string_view kTemporaryMark = ".tmp-";
constexpr std::size_t kSuffixDigits = 16;

// A name nobody can guess, so nobody can plant a link there first (O_EXCL refuses one anyway).
std::string random_suffix() {
  unsigned char bytes[kSuffixDigits / 2] = {};
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // Without entropy (never on Linux >= 3.17): time and pid, still guarded by O_EXCL|O_NOFOLLOW.
      const auto mixed = static_cast<std::uint64_t>(std::time(nullptr)) ^ (std::uint64_t(::getpid()) << 32);
      std::memcpy(bytes, &mixed, sizeof bytes);
      break;
    }
    got += static_cast<std::size_t>(n);
  }
  std::string text;
  for (unsigned char b : bytes) text += fmt::format("{:02x}", b);
  return text;
}

std::filesystem::path directory_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}

}  // namespace

Error default_write_failure(const WriteFailure& failure) {
  return environment_error(fmt::format("cannot write {} ({}: {}): check free space and permissions",
                                       failure.target.string(), failure.step,
                                       std::strerror(failure.error_number)));
}

AtomicFile::AtomicFile(std::filesystem::path target, WriteFailureMessage message)
    : target_(std::move(target)), message_(std::move(message)) {
  for (int attempt = 0; attempt < 8 && fd_ < 0; ++attempt) {
    temporary_ = directory_of(target_) /
                 fmt::format(".{}{}{}", target_.filename().string(), kTemporaryMark, random_suffix());
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) fail("create temporary file", errno);
  // A file replaced keeps its permissions: a private result stays private.
  struct stat before {};
  if (::stat(target_.c_str(), &before) == 0 && S_ISREG(before.st_mode)) ::fchmod(fd_, before.st_mode & 07777);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const char* step, int error_number) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  committed_ = true;  // nothing left for the destructor
  throw message_(WriteFailure{target_, step, error_number});
}

void AtomicFile::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write", errno);
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail("fsync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close", errno);
  // rename() replaces a link at the target rather than following it.
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) fail("rename", errno);
  committed_ = true;
  // The rename is durable only once the directory is: without this a power loss could keep the old file.
  const int dir_fd = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) throw message_(WriteFailure{target_, "open directory", errno});
  const int rc = ::fsync(dir_fd);
  const int error_number = errno;
  ::close(dir_fd);
  // EINVAL: a file system that cannot sync a directory (some network ones); the rename still happened.
  if (rc != 0 && error_number != EINVAL)
    throw message_(WriteFailure{target_, "fsync directory", error_number});
}

void write_file_atomically(const std::filesystem::path& target, std::string_view content,
                           const WriteFailureMessage& message) {
  AtomicFile file(target, message);
  file.write(content);
  file.commit();
}

void sync_directory_of(const std::filesystem::path& path) {
  const int fd = ::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

bool is_atomic_temporary_name(std::string_view name) {
  const auto mark = name.rfind(kTemporaryMark);
  if (!name.starts_with('.') || mark == std::string_view::npos || mark < 2) return false;
  const std::string_view suffix = name.substr(mark + kTemporaryMark.size());
  if (suffix.size() != kSuffixDigits) return false;
  for (char c : suffix)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace wattwise
