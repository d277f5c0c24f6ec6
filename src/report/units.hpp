#pragma once

// The report's names for core/units.hpp: the formatting lives in core, so that the layers below report
// (experiment's progress lines) print quantities the same way.
#include "core/units.hpp"

namespace wattwise::report {

using wattwise::format_energy_j;
using wattwise::format_energy_spread_j;
using wattwise::format_number;
using wattwise::format_percent;
using wattwise::format_power_w;
using wattwise::format_seconds;
using wattwise::format_seconds_spread;

}  // namespace wattwise::report
