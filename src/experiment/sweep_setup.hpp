#pragma once

// What a sweep needs set up before its first run besides the plan: the reference setting of its analysis,
// and a simulated sweep's own state directory.
#include <filesystem>
#include <optional>

#include "analysis/run_record.hpp"
#include "hw/gpu.hpp"
#include "plan/plan.hpp"

namespace wattwise::experiment {

// The setting the analysis compares against when the user names none: the GPU's default power limit when
// the power limit is swept (and the sweep runs it), with every job knob at the first value the user listed
// (batch=64,128,256 compares against 64). Clocks have no default value to name (unlocked is not a number):
// then nullopt, and the analysis chooses by its own rule or asks for --reference, rather than fail on a
// reference that is not there. `gpu`: the sweep's first GPU, asked for its default power limit.
std::optional<analysis::Setting> default_reference(const plan::PlanSpec& spec, hw::Gpu& gpu);

// A private state directory for a simulated sweep: its journal and locks name simulated GPUs, which must
// never show up as a stale journal of the real ones. Removed with its tree when destroyed.
class PrivateStateDir {
 public:
  PrivateStateDir();  // an environment error when no temporary directory can be made
  ~PrivateStateDir();
  PrivateStateDir(const PrivateStateDir&) = delete;
  PrivateStateDir& operator=(const PrivateStateDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace wattwise::experiment
