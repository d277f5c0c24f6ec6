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
// the default power limit, unlocked clocks), that one; otherwise, for data without hints (a CSV), the
// setting with the highest power_limit_w, which is the vendor default in power-capping sweeps. When neither
// decides a single setting, a usage_error asks for --reference.
std::size_t choose_reference(const std::vector<SettingAggregate>& settings,
                             const std::optional<Setting>& named,
                             const std::optional<Setting>& default_setting);

}  // namespace wattwise::analysis
