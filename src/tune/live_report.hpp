#pragma once

// What `wattwise tune` reports of its tuning: the JSON fields it adds to `measure`'s (docs/tune.md, every
// field), the state it publishes for the job (Python's wattwise.tuning_state()), and the lines for people.
// Kept beside the live tuner rather than in report/: report/ sits below tune/ and must not know it.

#include <string>

#include <nlohmann/json.hpp>

#include "tune/live_tuning.hpp"
#include "tune/simulated_tune.hpp"
#include "tune/tuner.hpp"

namespace wattwise::tune {

const char* to_string(DecisionKind kind);  // probe, settle, retune
const char* knob_flag(TuneKnob knob);      // power-limit, sm-clock (the --knob values)
const char* knob_key(TuneKnob knob);       // power_limit_w, sm_clock_mhz (JSON keys, with their unit)
const char* knob_unit(TuneKnob knob);      // W, MHz

// One decision, for people: "probe: sets power limit 250 W (iteration 40; estimate of 300 W: 0.950 [0.940,
// 0.961] over 20 iterations): bracket [200, 300] W".
std::string decision_line(TuneKnob knob, const Decision& decision, bool dry_run, bool changes);

nlohmann::json decision_json(TuneKnob knob, const Decision& decision);

// The result as the tuner was configured (knob, metric, budget and its tolerance, probe caps, start value),
// before any iteration: the one place the live tuner and the simulated one take these from, so that both
// print and write the same.
LiveTuningResult tuning_result_for(const TunerConfig& config);

// A simulated tuning (`tune --simulate`) as the result the summary and the JSON read: no changes, no
// settings (nothing was applied to a GPU), every iteration fed.
LiveTuningResult tuning_result_of(const SimulatedTuneResult& simulated, bool dry_run);

// The fields `tune --json` adds to measure's: settled, profiling_iterations, decisions, dry_run, tuning.
nlohmann::json tune_json(const LiveTuningResult& result);

// The file named in WATTWISE_TUNING_STATE while the job runs; `phase` is searching, settled, dry-run,
// no-markers or stopped.
nlohmann::json tuning_state_json(const LiveTuningResult& result, const std::string& phase);

// A dry run is an A/A test (every candidate ran at the start value): one line saying whether it passed
// (holds the start value) or failed (would settle elsewhere: it took drift or noise for an effect).
std::string aa_test_line(const LiveTuningResult& result);

// The tuning's part of the summary printed after the job: the decisions and the iterations per setting.
std::string tune_summary(const LiveTuningResult& result);

// How many iterations put the mean within +-`relative` (0.01: 1%) of the truth at 95%, from the spread
// seen: (1.96 * std / (relative * mean))^2, rounded up; nullopt without a spread.
std::optional<std::uint64_t> iterations_for_precision(double mean, double std, double relative);

}  // namespace wattwise::tune
