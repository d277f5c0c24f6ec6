#pragma once

// Which kind of wattwise::Error an action threw (usage, data, environment...), or kInternal when it threw
// none: tests of parsers assert the kind, which decides the exit code and the wording the user sees.

#include "core/error.hpp"

namespace wattwise::testing {

inline ErrorKind kind_of_failure(auto&& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // no error at all
}

}  // namespace wattwise::testing
