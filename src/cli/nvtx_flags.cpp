#include "cli/nvtx_flags.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "core/error.hpp"
#include "nvtx/injection_path.hpp"

namespace wattwise::cli {

void add_nvtx_flags(CLI::App& app, NvtxFlags& flags) {
  app.add_flag("--nvtx", flags.enabled,
               "the job's NVTX ranges (push/pop, start/end; e.g. torch.cuda.nvtx.range_push) become phases, "
               "named by their message, without changing its code (docs/nvtx.md)");
  app.add_option("--nvtx-domains", flags.domains,
                 "with --nvtx: named NVTX domains whose ranges also become phases (as DOMAIN:message), "
                 "comma separated, or all (default: the default domain only)");
}

std::map<std::string, std::string> nvtx_job_environment(const NvtxFlags& flags, bool simulated) {
  if (!flags.domains.empty() && !flags.enabled)
    throw usage_error("--nvtx-domains names domains for --nvtx: add --nvtx");
  if (!flags.enabled) return {};
  if (simulated) throw usage_error("--nvtx marks a real job's phases: drop it with --simulate");
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const char* override_path = std::getenv("WATTWISE_NVTX_LIB");
  const auto library =
      nvtx::find_injection_library(self.parent_path(), WATTWISE_INSTALL_LIBDIR,
                                   override_path ? std::optional<std::string>(override_path) : std::nullopt);
  return nvtx::injection_environment(library, flags.domains);
}

}  // namespace wattwise::cli
