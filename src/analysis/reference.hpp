#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/aggregate.hpp"

namespace wattwise::analysis {

// Parses --reference "knob=value[,knob=value]" into a (partial) setting; a malformed pair is a usage_error.
Setting parse_setting_spec(const std::string& text);

// The one aggregate whose setting matches `spec` on every knob it names. No match is a usage_error that
// lists the values each named knob takes in the data; several matches (the spec leaves a knob open) is a
// usage_error listing them, so the user can add that knob.
std::size_t find_reference(const std::vector<SettingAggregate>& settings, const Setting& spec);

// The reference when the user names none. If the caller knows the default setting (the sweep stored it:
// the default power limit), that one; otherwise (a CSV, a clock sweep) the setting with the highest value of
// each hardware knob present: power_limit_w (the vendor default in power-capping sweeps), sm_clock_mhz and
// mem_clock_mhz (clock sweeps lock every value they run; the highest lock is the nearest to unlocked). When
// that does not decide a single setting (a job knob varies too), a usage_error asks for --reference.
std::size_t choose_reference(const std::vector<SettingAggregate>& settings,
                             const std::optional<Setting>& named,
                             const std::optional<Setting>& default_setting);

}  // namespace wattwise::analysis
