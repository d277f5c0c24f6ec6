#pragma once

// Shared by the libFuzzer targets: a parser may reject its input only with wattwise::Error (a clear
// message, exit 2/3/4); any other exception is a crash, like a sanitizer report.
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/error.hpp"

namespace wattwise::fuzz {

template <typename Body>
void expect_only_wattwise_errors(const char* target, Body&& body) {
  try {
    body();
  } catch (const wattwise::Error&) {
    // A clear rejection: fine.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: exception other than wattwise::Error: %s\n", target, e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "%s: unknown exception\n", target);
    std::abort();
  }
}

}  // namespace wattwise::fuzz
