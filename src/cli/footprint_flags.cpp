#include "cli/footprint_flags.hpp"

namespace wattwise::cli {

void add_footprint_flags(CLI::App& app, FootprintFlagValues& flags) {
  app.add_option("--carbon-intensity", flags.carbon_intensity,
                 "show CO2e at this carbon intensity: gCO2e/kWh (e.g. 350), or a region, an ISO country "
                 "code or world, for its yearly average (docs/footprint.md; default: "
                 "WATTWISE_CARBON_INTENSITY, then the config file, else none)");
  app.add_option("--price", flags.price,
                 "show the electricity cost at this price per kWh, AMOUNT[CURRENCY], e.g. 0.30EUR (default: "
                 "WATTWISE_PRICE, then the config file, else none)");
}

FootprintRates footprint_rates(const FootprintFlagValues& flags) {
  return resolve_footprint_rates(flags, FootprintEnvironment::from_process());
}

}  // namespace wattwise::cli
