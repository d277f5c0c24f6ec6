#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <iostream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::cli {

namespace {

Error cannot_write(const std::string& path, const std::string& why) {
  return environment_error(fmt::format("cannot write '{}' ({}): choose a writable path", path, why));
}

// The descriptor a path names itself (/dev/fd/N and its aliases), if it names one.
std::optional<int> named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    const std::string_view digits = std::string_view(path).substr(prefix.size());
    if (const auto fd = parse_integer<int>(digits); fd && *fd >= 0) return fd;
  }
  return std::nullopt;
}

void write_all(int fd, std::string_view bytes, const std::string& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw cannot_write(path, std::strerror(errno));
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

// Holds what the stream is given and passes it on in 64 KiB pieces. An error is kept and thrown by commit():
// a stream would only set its badbit and forget why.
class OutputFile::Buffer : public std::streambuf {
 public:
  explicit Buffer(std::function<void(std::string_view)> sink) : sink_(std::move(sink)) {
    setp(space_.data(), space_.data() + space_.size());
  }
  void finish() {
    drain();
    if (error_) std::rethrow_exception(error_);
  }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const auto size = static_cast<std::size_t>(pptr() - pbase());
    setp(space_.data(), space_.data() + space_.size());
    if (error_) return false;
    try {
      if (size > 0) sink_(std::string_view(space_.data(), size));
    } catch (...) {
      error_ = std::current_exception();
      return false;
    }
    return true;
  }

  std::function<void(std::string_view)> sink_;
  std::array<char, 1 << 16> space_{};
  std::exception_ptr error_;
};

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") return;
  std::error_code ignored;
  if (path.empty() || std::filesystem::is_directory(path, ignored))
    throw usage_error(fmt::format("output '{}' is a directory: give the path of a file in it (e.g. {}/out)",
                                  path, path.empty() ? "." : path));
  struct stat info {};
  if (const auto fd = named_descriptor(path)) {
    const int flags = ::fcntl(*fd, F_GETFL);
    if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
      throw cannot_write(path, fmt::format("descriptor {} is not open for writing", *fd));
    fd_ = *fd;
  } else if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    // A device or a FIFO is written through, as `perf stat -o` and a shell's `>` write it.
    fd_ = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) throw cannot_write(path, std::strerror(errno));
    close_fd_ = true;
  } else {
    // A regular file or a new path. Through a link, the file the link names is replaced: the link stays.
    std::filesystem::path target(path);
    if (std::filesystem::is_symlink(target, ignored))
      target = std::filesystem::weakly_canonical(target, ignored);
    if (target.empty()) target = path;
    file_.emplace(target, [path](const WriteFailure& failure) {
      return cannot_write(path, fmt::format("{}: {}", failure.step, std::strerror(failure.error_number)));
    });
  }
  buffer_ = std::make_unique<Buffer>([this](std::string_view bytes) {
    if (file_)
      file_->write(bytes);
    else
      write_all(fd_, bytes, path_);
  });
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  if (close_fd_) ::close(fd_);
}

std::ostream& OutputFile::stream() {
  return stream_ ? *stream_ : std::cout;
}

void OutputFile::commit() {
  if (!stream_) {
    std::cout.flush();
    return;
  }
  if (committed_) return;
  committed_ = true;
  std::cout.flush();  // /dev/stdout or /dev/fd/1: what wattwise printed there comes first
  buffer_->finish();
  if (file_) file_->commit();
}

}  // namespace wattwise::cli
