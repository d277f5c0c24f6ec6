#include "analysis/reference.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::analysis {
namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string available_values(const std::vector<SettingAggregate>& settings, const std::string& knob) {
  std::set<double> values;
  for (const auto& aggregate : settings) {
    const auto found = aggregate.setting.find(knob);
    if (found != aggregate.setting.end()) values.insert(found->second);
  }
  return fmt::format("{}", fmt::join(values, ", "));
}

std::string available_knobs(const std::vector<SettingAggregate>& settings) {
  std::set<std::string> knobs;
  for (const auto& aggregate : settings) {
    for (const auto& entry : aggregate.setting) knobs.insert(entry.first);
  }
  return knobs.empty() ? "(none)" : fmt::format("{}", fmt::join(knobs, ", "));
}

[[noreturn]] void throw_not_found(const std::vector<SettingAggregate>& settings, const Setting& spec) {
  std::vector<std::string> parts;
  for (const auto& [knob, value] : spec) {
    const std::string values = available_values(settings, knob);
    if (values.empty()) {
      parts.push_back(fmt::format("knob {} is not in the data (knobs: {})", knob, available_knobs(settings)));
    } else {
      parts.push_back(fmt::format("{} takes {}", knob, values));
    }
  }
  throw usage_error(fmt::format("reference {} not found: {}; pick one of those values with --reference",
                                to_string(spec), fmt::join(parts, "; ")));
}

}  // namespace

Setting parse_setting_spec(const std::string& text) {
  Setting spec;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string pair = trim(text.substr(start, comma - start));
    const std::size_t equals = pair.find('=');
    bool ok = equals != std::string::npos && equals > 0;
    if (ok) {
      const std::string knob = trim(pair.substr(0, equals));
      const auto value = parse_number(trim(pair.substr(equals + 1)));
      ok = !knob.empty() && value;
      if (ok) spec[knob] = *value;
    }
    if (!ok) {
      throw usage_error(
          fmt::format("--reference '{}': expected knob=value[,knob=value], e.g. power_limit_w=300", text));
    }
    start = comma + 1;
  }
  return spec;
}

std::size_t find_reference(const std::vector<SettingAggregate>& settings, const Setting& spec) {
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < settings.size(); ++i) {
    if (matches(settings[i].setting, spec)) found.push_back(i);
  }
  if (found.empty()) throw_not_found(settings, spec);
  if (found.size() > 1) {
    std::vector<std::string> names;
    for (std::size_t i : found) names.push_back(to_string(settings[i].setting));
    throw usage_error(fmt::format("reference {} matches {} settings ({}); name more knobs with --reference",
                                  to_string(spec), found.size(), fmt::join(names, "; ")));
  }
  return found.front();
}

std::size_t choose_reference(const std::vector<SettingAggregate>& settings,
                             const std::optional<Setting>& named,
                             const std::optional<Setting>& default_setting) {
  if (settings.empty()) throw data_error("no successful runs to analyse; check that the runs finished");
  if (named) return find_reference(settings, *named);
  if (default_setting) return find_reference(settings, *default_setting);
  // Without hints, the GPU as it runs when nobody touched it: the highest power limit (the vendor default
  // in power-capping sweeps) and the highest locked clocks (a sweep locks every clock it runs; unlocked is
  // not a value, and the highest lock is the nearest to what the boost clock reaches), per hardware knob.
  Setting highest;
  for (const char* knob : {"power_limit_w", "sm_clock_mhz", "mem_clock_mhz"})
    for (const auto& aggregate : settings)
      if (const auto it = aggregate.setting.find(knob); it != aggregate.setting.end())
        highest[knob] = std::max(highest.contains(knob) ? highest[knob] : it->second, it->second);
  if (highest.empty()) {
    if (settings.size() == 1) return 0;
    throw usage_error(fmt::format(
        "no default setting is known (no power_limit_w, sm_clock_mhz or mem_clock_mhz knob); name "
        "the reference with --reference knob=value (knobs: {})",
        available_knobs(settings)));
  }
  return find_reference(settings, highest);
}

}  // namespace wattwise::analysis
