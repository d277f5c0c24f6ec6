#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace wattwise::plan {

// The checks of a whole plan that need no GPU, run by `sweep` before anything runs or any setting changes
// (the GPU's own limits are checked by safety::validate_hardware_settings and check_clocks below). Each
// failure is a usage_error of one line that says what to write instead.

// Every `{name}` in the job's command (or in `--job-gpus`, named by `what`) must be a knob of the plan
// (rules: substitute_params). `${name}` that is not a knob is left alone for the job's shell.
void check_placeholders(const std::vector<std::string>& argv, const PlanSpec& spec, std::string_view what);

// Job knobs must have numeric values: the analysis compares settings as numbers (E against batch size),
// so a word (`model=resnet50,bert`) is refused before the first run rather than after the last.
void check_numeric_job_knobs(const PlanSpec& spec);

// `--reference knob=value,...` must name one setting the plan runs: every knob it names is a knob of the
// plan, each value one of that knob's values, and every knob with more than one value is named.
void check_reference(const std::map<std::string, double>& reference, const PlanSpec& spec);

// What a GPU says it can lock its clocks to (NVML's supported lists, MHz); empty: the GPU lists none.
struct SupportedClocks {
  std::string gpu;                // for messages: "GPU 0 (GPU-...)"
  std::vector<unsigned> mem_mhz;  // supported memory clocks
  std::vector<unsigned> sm_mhz;   // supported SM clocks, over all memory clocks
};

// Every locked clock of the plan within the GPU's supported range (the driver rounds a value inside the
// range to a supported clock, so a range like 1000:1980:90 is fine; 5000 on a GPU whose maximum is 1980 is
// not). A GPU that lists no clocks is not checked here (locking them fails up front in the guard).
void check_clocks(const Plan& plan, const SupportedClocks& gpu);

}  // namespace wattwise::plan
