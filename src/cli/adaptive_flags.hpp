#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "experiment/adaptive_sweep.hpp"
#include "experiment/runner.hpp"

namespace wattwise::cli {

// `sweep --adaptive [--budget N|Nh] [--precision 5W] [--metric M]...` (docs/sweep.md "Adaptive sweeps").
struct AdaptiveFlags {
  bool enabled = false;
  std::optional<std::string> budget;     // runs ("40") or time ("2h", "90m", "600s")
  std::optional<std::string> precision;  // knob units: "5W", "5", "50MHz"
  std::vector<std::string> metrics;      // empty: E, EDP, EDS(2.0), EDS(1.5)
};

void add_adaptive_flags(CLI::App& app, AdaptiveFlags& flags);

// The repeats to plan for each value (the most an adaptive sweep runs one value). A usage error when
// --adaptive meets --repeat (the sweep decides the repeats itself: give --budget). `resumed_db`: the
// database `--resume` continues with the flags given again (empty: none); an adaptive sweep's there keeps
// the repeats it planned (grid x 4 before the cap was 12), which its user never gave.
unsigned adaptive_plan_repeats(const AdaptiveFlags& flags, const CLI::App& app,
                               const std::filesystem::path& resumed_db = {});

// Checks the flags against the plan (one power-limit or SM-clock knob with numeric values; budget,
// precision and metrics well-formed) and builds the decisions' configuration. `reference`: the analysis's
// reference setting; without it the knob's highest value is the metrics' reference. `max_slowdown`: the
// sweep's --max-slowdown as given: each metric's optimum is looked for among the values within it, and the
// closing headline's limit is located at it ("none": no limit, and no headline limit to locate).
experiment::AdaptiveConfig adaptive_config(const AdaptiveFlags& flags, const plan::Plan& plan,
                                           const std::optional<analysis::Setting>& reference,
                                           std::uint64_t seed,
                                           const std::optional<std::string>& max_slowdown = std::nullopt);

// The line `sweep --adaptive --dry-run` prints above the plan: the plan lists every run the sweep may make
// (grid x max_repeats, more than an exhaustive sweep's), not the few it will.
std::string adaptive_dry_run_note(const experiment::AdaptiveConfig& config, std::size_t planned_runs);

// Sets `options.next_run` and the progress total for an adaptive sweep; returns what to print after it,
// given analyze's recommendation of each metric (by name) over the sweep's runs.
std::function<std::string(const std::map<std::string, double>&)> wire_adaptive_sweep(
    const experiment::AdaptiveConfig& config, experiment::SweepOptions& options);

}  // namespace wattwise::cli
