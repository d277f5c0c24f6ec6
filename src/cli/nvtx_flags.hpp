#pragma once

// --nvtx and --nvtx-domains, shared by `measure` and `tune`: NVTX ranges of the job become phases through the
// injection library (docs/nvtx.md).
#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace wattwise::cli {

struct NvtxFlags {
  bool enabled = false;
  std::string domains;  // named NVTX domains beside the default one: a comma separated list, or "all"
};

void add_nvtx_flags(CLI::App& app, NvtxFlags& flags);

// What the job's environment gains (nothing without --nvtx). Throws a usage error for --nvtx with
// --simulate, an environment error when the injection library is not found. Call before any GPU is touched.
std::map<std::string, std::string> nvtx_job_environment(const NvtxFlags& flags, bool simulated);

}  // namespace wattwise::cli
