#pragma once

// Where `--nvtx` finds the injection library it names in NVTX_INJECTION64_PATH, and the job environment that
// turns it on (docs/nvtx.md).
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace wattwise::nvtx {

inline constexpr const char* kInjectionLibraryName = "libwattwise-nvtx.so";

// The library, as an absolute path (the job may change directory before its first NVTX call): the file named
// by `override_path` when given (WATTWISE_NVTX_LIB), else the first of: beside the wattwise binary (the
// build tree and the GPU bundle), the install prefix's library directory (EXE_DIR/../LIBDIR, `lib_dir` being
// CMAKE_INSTALL_LIBDIR), EXE_DIR/../lib. Throws an environment error naming where it looked.
std::filesystem::path find_injection_library(const std::filesystem::path& exe_dir, const std::string& lib_dir,
                                             const std::optional<std::string>& override_path);

// NVTX_INJECTION64_PATH for the library, and WATTWISE_NVTX_DOMAINS when named domains are wanted beside the
// default one (a comma separated list, or "all").
std::map<std::string, std::string> injection_environment(const std::filesystem::path& library,
                                                         const std::string& domains);

}  // namespace wattwise::nvtx
