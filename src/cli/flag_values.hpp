#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/clock.hpp"

namespace wattwise::cli {

// The unit a duration flag is written in. Every duration flag is a plain decimal number in its unit
// (`--timeout 3600`, `--interval 20`): no suffixes, so a number never means two different things.
enum class DurationUnit { kSeconds, kMilliseconds };

// The one parser of every duration flag (--timeout, --cooldown, --interval, --counter-interval). The text
// must be a finite decimal number within [min, max] (in `unit`); anything else (abc, nan, inf, 1e300, -1, "")
// is a usage_error that names the flag, the unit and the accepted range. Within that range the conversion
// to nanoseconds is exact enough and never overflows.
Nanos parse_duration(std::string_view flag, const std::string& text, DurationUnit unit, double min,
                     double max);

// The accepted ranges, in the flag's unit (docs/sweep.md and docs/measure.md say the same).
inline constexpr double kMinTimeoutS = 0.001;
inline constexpr double kMaxTimeoutS = 366.0 * 24 * 3600;  // a year: longer is a typo
inline constexpr double kMinCooldownS = 0;
inline constexpr double kMaxCooldownS = 24 * 3600;
inline constexpr double kMinIntervalMs = 1;
inline constexpr double kMaxIntervalMs = 10'000;  // readings 10 s apart no longer show a job's power
// PCIe throughput blocks the sampling thread ~42 ms a read on an H100: once a second at most
// (sampler_config).
inline constexpr double kMinPcieIntervalMs = 1'000;
inline constexpr double kMaxPcieIntervalMs = 3'600'000;

// `--gpus` and `--job-gpus N`: a whole number within [min, max]; usage_error naming the flag otherwise.
std::size_t parse_count(std::string_view flag, const std::string& text, std::size_t min, std::size_t max);

}  // namespace wattwise::cli
