#pragma once

#include <CLI/CLI.hpp>

#include "core/footprint_settings.hpp"

namespace wattwise::cli {

// --carbon-intensity and --price, shared by measure, tune, analyze, sweep and report (docs/footprint.md).
void add_footprint_flags(CLI::App& app, FootprintFlagValues& flags);

// The rates from the flags, the environment and the config file; bad values are usage errors, raised
// before any job runs or any GPU setting changes.
FootprintRates footprint_rates(const FootprintFlagValues& flags);

}  // namespace wattwise::cli
