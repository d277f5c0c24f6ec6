#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

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

}  // namespace wattwise::cli
