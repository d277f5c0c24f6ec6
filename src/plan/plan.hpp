#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/knob.hpp"

namespace wattwise::plan {

enum class RunOrder { kAscending, kDescending, kRandom };

RunOrder parse_run_order(std::string_view text);  // "ascending", "descending", "random"
std::string_view to_string(RunOrder order);

// A plan larger than this is a typo (each run is a whole job); make_plan refuses it (usage_error).
inline constexpr std::size_t kMaxPlanRuns = 100'000;

struct PlanSpec {
  std::vector<Knob> knobs;  // `supported` clock knobs must be resolved first
  unsigned repeats = 1;
  RunOrder order = RunOrder::kAscending;
  std::uint64_t seed = 0;  // used by RunOrder::kRandom
  unsigned warmup_runs = 0;
};

struct KnobSetting {
  std::string knob;
  std::string value;
  bool operator==(const KnobSetting&) const = default;
};

// The hardware part of a run's settings; absent means "leave as it is".
struct HardwareSettings {
  std::optional<double> power_limit_w = std::nullopt;
  std::optional<unsigned> sm_clock_mhz = std::nullopt;
  std::optional<unsigned> mem_clock_mhz = std::nullopt;
  bool empty() const { return !power_limit_w && !sm_clock_mhz && !mem_clock_mhz; }
  bool operator==(const HardwareSettings&) const = default;
};

struct PlannedRun {
  // Stable id: the position in the plan. The same spec always gives the same indices, so a resumed sweep
  // can tell which runs are done.
  std::size_t index = 0;
  bool warmup = false;                // warm-up runs are executed and stored but not analysed
  unsigned repeat = 0;                // 0-based; warm-ups count their own repeats
  std::vector<KnobSetting> settings;  // one per knob, in the spec's knob order
  HardwareSettings hardware;
  std::map<std::string, std::string> params;  // every knob name -> value, for substitution
};

struct Plan {
  PlanSpec spec;
  std::vector<PlannedRun> runs;
};

// The product of knob values x repeats, in the requested order, warm-ups first. Ascending and descending
// orders interleave the repeats (all settings once, then all again) to spread slow drift (temperature)
// over every setting; random order shuffles all runs with the seed.
Plan make_plan(const PlanSpec& spec);

// Every run's hardware settings, for validate_hardware_settings() before the first run.
std::vector<HardwareSettings> hardware_settings_of(const Plan& plan);
// Whether any of these settings changes a hardware knob (a plan of job knobs alone changes none).
bool changes_hardware(const std::vector<HardwareSettings>& settings);
// The runs still to do on resume, in plan order.
std::vector<PlannedRun> runs_not_done(const Plan& plan, const std::set<std::size_t>& completed_indices);

// The spec as JSON, to store beside the results and compare on resume.
nlohmann::json plan_spec_to_json(const PlanSpec& spec);
// The spec back from that JSON (`sweep --resume --db X` with no knobs); a data error when it is not one.
// Keys other than the spec's (e.g. "reference") are ignored.
PlanSpec plan_spec_from_json(const nlohmann::json& json);

// The job's command is an argv, never seen by a shell. In each argument:
//   {name}     (name: letters, digits, '_', not starting with a digit) is the run's value of knob `name`;
//   {{name}}   is the literal text {name};
//   any other brace ({}, {"a": 1}, {0}) is literal.
// substitute_params leaves a `{name}` that is not a knob as it is; plan::check_placeholders (validate.hpp)
// refuses such a command before anything runs, except `${name}`, which is left to the job's shell.
std::vector<std::string> substitute_params(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& params);

// One argument cut into literal text and placeholders, by the rules above.
struct CommandPiece {
  std::string text;  // the literal text, or the placeholder's name
  bool is_placeholder = false;
  bool after_dollar = false;  // a placeholder written ${name}
};
std::vector<CommandPiece> command_pieces(const std::string& arg);

// WATTWISE_PARAM_<NAME uppercased>=value for each knob of the run.
std::vector<std::pair<std::string, std::string>> param_environment(
    const std::map<std::string, std::string>& params);

// Deterministic on every platform: std::mt19937_64 is fully specified, std::shuffle is not.
template <typename T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed);

}  // namespace wattwise::plan

#include "plan/seeded_shuffle.ipp"
