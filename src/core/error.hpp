#pragma once

#include <stdexcept>
#include <string>

namespace wattwise {

// The kind of failure decides the exit code, so scripts can tell a typo from a missing driver.
enum class ErrorKind {
  kUsage = 2,        // bad flag, bad value, out-of-range limit: the user can fix the command line
  kEnvironment = 3,  // no driver, no permission, unwritable path, GPU lost: the machine needs fixing
  kData = 4,         // corrupt database or CSV, inconsistent journal
  kInternal = 70,    // a bug in wattwise
};

// The one exception type that crosses module boundaries. `what()` is a single line meant for people:
// what failed, and what to do about it.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

inline Error usage_error(const std::string& message) {
  return Error(ErrorKind::kUsage, message);
}
inline Error environment_error(const std::string& message) {
  return Error(ErrorKind::kEnvironment, message);
}
inline Error data_error(const std::string& message) {
  return Error(ErrorKind::kData, message);
}

}  // namespace wattwise
