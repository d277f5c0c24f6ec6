#pragma once

#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "measure/node_energy.hpp"

namespace wattwise::cli {

// The node-power flags of measure and sweep (docs/node-power.md). Text, parsed once by node_options.
struct NodeFlags {
  std::optional<std::string> meter_cmd;
  std::optional<std::string> meter_timeout_s;
  std::optional<std::string> node_interval_ms;
  bool no_powercap = false;
};

inline constexpr double kMinNodeIntervalMs = 100;
inline constexpr double kMaxNodeIntervalMs = 60'000;
inline constexpr double kMinMeterTimeoutS = 0.1;
inline constexpr double kMaxMeterTimeoutS = 600;

void add_node_flags(CLI::App& app, NodeFlags& flags);

// The options, checked: usage errors for bad values and for a meter program that cannot be found, before
// anything runs.
measure::NodeOptions node_options(const NodeFlags& flags);

// For `sweep --resume`: the flags as given, and back (flags given on the command line win).
nlohmann::json node_flags_json(const NodeFlags& flags);
void node_flags_from_json(const nlohmann::json& options, NodeFlags& flags,
                          const std::function<bool(const char* flag)>& given);

}  // namespace wattwise::cli
