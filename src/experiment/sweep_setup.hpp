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
std::optional<analysis::Setting> default_reference(const plan::PlanSpec& spec, hw::GpuReadings& gpu);

}  // namespace wattwise::experiment
