#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wattwise::plan {

// Hardware knobs go through the settings guard; job knobs are substituted into the job's command line
// and environment.
enum class KnobKind { kHardware, kJob };

inline constexpr std::string_view kPowerLimitKnob = "power_limit_w";
inline constexpr std::string_view kSmClockKnob = "sm_clock_mhz";
inline constexpr std::string_view kMemClockKnob = "mem_clock_mhz";

// Values beyond any GPU: a larger one is a typo, refused by the parsers (and never cast out of range).
inline constexpr double kMaxPowerLimitW = 100'000;
inline constexpr unsigned kMaxClockMhz = 100'000;

// One knob and the values a plan sweeps it over. Values are kept as the text that is substituted into
// the command ("64", "150", "232.5"), so a job knob can be any word; hardware knobs hold numbers.
struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kJob;
  std::vector<std::string> values;
  // `--sm-clock supported`: the values are the GPU's supported clocks, filled in by
  // resolve_supported_clocks() once the GPU is known.
  bool from_supported_clocks = false;
};

// `--power-limit 150:300:5` (inclusive range in watts) or `150,200,250`.
Knob parse_power_limit_knob(std::string_view spec);
// `--sm-clock` / `--mem-clock`: a range, a list, or `supported`. `knob_name` is kSmClockKnob or
// kMemClockKnob.
Knob parse_clock_knob(std::string_view knob_name, std::string_view spec);
// `--param batch=64,128,256` (or a numeric range, `batch=32:256:32`).
Knob parse_job_knob(std::string_view spec);

// Fills a `supported` clock knob from the GPU's supported clocks (MHz), ascending, without duplicates.
// A knob with explicit values is returned unchanged.
Knob resolve_supported_clocks(const Knob& knob, const std::vector<unsigned>& supported_mhz);

// A knob's value as a number: a finite decimal number (core/numbers.hpp), else nullopt (a text-valued job
// knob, e.g. a model name). The one reading of knob values: the plan's order, its validation, the analysis
// of a database and the report all use it, so they cannot disagree on what "128x" is.
std::optional<double> knob_value_number(std::string_view value);
// The same; usage_error naming the knob when it is not a number.
double knob_number(const std::string& knob_name, const std::string& value);

}  // namespace wattwise::plan
