#include "nvtx/injection_path.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::nvtx {

namespace {

bool readable_file(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), R_OK) == 0;
}

}  // namespace

std::filesystem::path find_injection_library(const std::filesystem::path& exe_dir, const std::string& lib_dir,
                                             const std::optional<std::string>& override_path) {
  std::error_code ec;
  if (override_path) {
    const std::filesystem::path path = *override_path;
    if (!readable_file(path))
      throw environment_error(fmt::format(
          "--nvtx: WATTWISE_NVTX_LIB names {}, which is not a readable file: point it at {} or unset it",
          path.string(), kInjectionLibraryName));
    return std::filesystem::absolute(path, ec).lexically_normal();
  }
  const std::filesystem::path candidates[] = {exe_dir / kInjectionLibraryName,
                                              exe_dir / ".." / lib_dir / kInjectionLibraryName,
                                              exe_dir / ".." / "lib" / kInjectionLibraryName};
  for (const auto& candidate : candidates)
    if (readable_file(candidate)) return std::filesystem::absolute(candidate, ec).lexically_normal();
  throw environment_error(fmt::format(
      "--nvtx needs {}, found neither beside wattwise ({}) nor in {}: build the wattwise-nvtx target, "
      "reinstall, or set WATTWISE_NVTX_LIB to its path",
      kInjectionLibraryName, exe_dir.string(), (exe_dir / ".." / lib_dir).lexically_normal().string()));
}

std::map<std::string, std::string> injection_environment(const std::filesystem::path& library,
                                                         const std::string& domains) {
  std::map<std::string, std::string> environment{{"NVTX_INJECTION64_PATH", library.string()}};
  if (!domains.empty()) environment["WATTWISE_NVTX_DOMAINS"] = domains;
  return environment;
}

}  // namespace wattwise::nvtx
