#include "core/private_dir.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

#include "core/error.hpp"

namespace wattwise {

std::filesystem::path make_private_directory(const std::filesystem::path& base, std::string_view prefix,
                                             std::string_view what) {
  std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw environment_error(fmt::format("cannot create {} in {}: {} (set TMPDIR to a writable directory)",
                                        what, base.string(), std::strerror(errno)));
  }
  return pattern;
}

std::filesystem::path socket_directory_base() {
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir && std::strlen(tmpdir) < 60)
    return tmpdir;
  return "/tmp";
}

PrivateDir::PrivateDir(std::string_view prefix, std::string_view what)
    : path_(make_private_directory(std::filesystem::temp_directory_path(), prefix, what)) {}

PrivateDir::~PrivateDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace wattwise
