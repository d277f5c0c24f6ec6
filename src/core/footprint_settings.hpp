#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "core/footprint.hpp"

namespace wattwise {

// Where the carbon intensity and the electricity price come from, each on its own, first found wins:
//   1. the flags --carbon-intensity G|REGION and --price AMOUNT[CURRENCY];
//   2. the environment: WATTWISE_CARBON_INTENSITY, WATTWISE_PRICE;
//   3. the config file's "footprint" object (docs/footprint.md): the file WATTWISE_CONFIG names, else
//      $XDG_CONFIG_HOME/wattwise/config.json, else ~/.config/wattwise/config.json;
//   4. nothing: only kWh is shown.

inline constexpr const char* kCarbonIntensityEnv = "WATTWISE_CARBON_INTENSITY";
inline constexpr const char* kPriceEnv = "WATTWISE_PRICE";
inline constexpr const char* kConfigEnv = "WATTWISE_CONFIG";

struct FootprintFlagValues {
  std::optional<std::string> carbon_intensity;
  std::optional<std::string> price;
};

// The process environment as resolution reads it; a test passes its own.
struct FootprintEnvironment {
  std::optional<std::string> carbon_intensity;  // WATTWISE_CARBON_INTENSITY
  std::optional<std::string> price;             // WATTWISE_PRICE
  std::optional<std::string> config;            // WATTWISE_CONFIG
  std::optional<std::string> xdg_config_home;
  std::optional<std::string> home;

  static FootprintEnvironment from_process();
};

// The config file to read: WATTWISE_CONFIG when set (it must exist), else the XDG default, which may be
// absent (nothing to read). Empty variables count as unset, as the XDG specification says.
std::optional<std::filesystem::path> footprint_config_path(const FootprintEnvironment& env);

// Resolves both settings. Bad values anywhere, a config file that is not JSON or holds unknown footprint
// keys, and a WATTWISE_CONFIG that names no file are usage errors (exit 2) naming where the value came
// from; a config file that exists but cannot be read is an environment error (exit 3).
FootprintRates resolve_footprint_rates(const FootprintFlagValues& flags, const FootprintEnvironment& env);

}  // namespace wattwise
