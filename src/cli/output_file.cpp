#include "cli/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::cli {

OutputFile::OutputFile(const std::string& path) : path_(path) {
  if (path == "-") {
    is_stdout_ = true;
    return;
  }
  const std::filesystem::path target(path);
  // The file is written beside the target and renamed onto it at the end: a directory there would only
  // fail at that rename, after the work.
  std::error_code ignored;
  if (path.empty() || std::filesystem::is_directory(target, ignored))
    throw usage_error(fmt::format("output '{}' is a directory: give the path of a file in it (e.g. {}/out)",
                                  path, path.empty() ? "." : path));
  temporary_ = target;
  temporary_ += fmt::format(".tmp-{}", getpid());
  file_.open(temporary_, std::ios::out | std::ios::trunc);
  if (!file_)
    throw environment_error(
        fmt::format("cannot write '{}' ({}): choose a writable path", path, std::strerror(errno)));
}

OutputFile::~OutputFile() {
  if (!is_stdout_ && !committed_) {
    file_.close();
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

std::ostream& OutputFile::stream() {
  return is_stdout_ ? std::cout : file_;
}

void OutputFile::commit() {
  if (is_stdout_) {
    std::cout.flush();
    return;
  }
  file_.flush();
  const bool ok = static_cast<bool>(file_);
  file_.close();
  std::error_code error;
  if (ok) std::filesystem::rename(temporary_, path_, error);
  if (!ok || error)
    throw environment_error(fmt::format("could not write '{}' ({}): check free space and permissions", path_,
                                        ok ? error.message() : "write failed"));
  committed_ = true;
}

}  // namespace wattwise::cli
