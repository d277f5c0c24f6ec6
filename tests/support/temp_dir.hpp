#pragma once

// A temporary directory for one test, removed with everything in it when the test ends (unless kept: a
// failed test's outputs stay for a look). The one way tests make a temporary directory.

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace wattwise::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "wattwise-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~TempDir() {
    if (kept_) return;
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Leaves the tree in place when this object goes.
  void keep() { kept_ = true; }

 private:
  std::filesystem::path path_;
  bool kept_ = false;
};

}  // namespace wattwise::testing
