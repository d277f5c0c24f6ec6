#include "core/footprint_settings.hpp"

#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"

namespace wattwise {

namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;  // a config of two settings is a few hundred bytes

std::optional<std::string> non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// The config's "footprint" object as the text a flag would carry; numbers are written back as text so that
// one parser checks every origin alike.
struct ConfigValues {
  std::optional<std::string> carbon_intensity;
  std::optional<std::string> price;
  std::string source;  // "config /home/u/.config/wattwise/config.json"
};

std::optional<std::string> config_text(const nlohmann::json& footprint, const char* key,
                                       const std::string& path) {
  if (!footprint.contains(key)) return std::nullopt;
  const auto& value = footprint.at(key);
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  throw usage_error(
      fmt::format("{}: footprint.{} must be a number or a string, e.g. \"DE\" or \"0.30EUR\"", path, key));
}

ConfigValues read_config(const std::filesystem::path& path) {
  // A FIFO or a device under the config's name must not hang or fill every command: refused with one line.
  const std::string text = read_regular_file(path, kMaxConfigBytes, "a JSON config file (docs/footprint.md)");
  const auto config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object())
    throw usage_error(
        fmt::format("{} is not a JSON object: fix it or remove it (docs/footprint.md)", path.string()));
  ConfigValues values;
  values.source = "config " + path.string();
  if (!config.contains("footprint")) return values;
  const auto& footprint = config.at("footprint");
  if (!footprint.is_object())
    throw usage_error(fmt::format("{}: \"footprint\" must be an object (docs/footprint.md)", path.string()));
  // A misspelt key would silently drop the user's setting: refuse it.
  for (const auto& [key, value] : footprint.items())
    if (key != "carbon_intensity" && key != "price")
      throw usage_error(
          fmt::format("{}: unknown key footprint.{}: use carbon_intensity and price", path.string(), key));
  values.carbon_intensity = config_text(footprint, "carbon_intensity", path.string());
  values.price = config_text(footprint, "price", path.string());
  return values;
}

}  // namespace

FootprintEnvironment FootprintEnvironment::from_process() {
  return FootprintEnvironment{non_empty_env(kCarbonIntensityEnv), non_empty_env(kPriceEnv),
                              non_empty_env(kConfigEnv), non_empty_env("XDG_CONFIG_HOME"),
                              non_empty_env("HOME")};
}

std::optional<std::filesystem::path> footprint_config_path(const FootprintEnvironment& env) {
  if (env.config) {
    std::error_code error;
    if (!std::filesystem::exists(*env.config, error))
      throw usage_error(
          fmt::format("{} names {}, which does not exist: fix or unset it", kConfigEnv, *env.config));
    return std::filesystem::path(*env.config);
  }
  std::filesystem::path base;
  // XDG: a relative XDG_CONFIG_HOME is invalid and ignored.
  if (env.xdg_config_home && std::filesystem::path(*env.xdg_config_home).is_absolute())
    base = *env.xdg_config_home;
  else if (env.home)
    base = std::filesystem::path(*env.home) / ".config";
  else
    return std::nullopt;
  const auto path = base / "wattwise" / "config.json";
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  return path;
}

FootprintRates resolve_footprint_rates(const FootprintFlagValues& flags, const FootprintEnvironment& env) {
  // The file is read whenever it exists, even when flags cover both settings, so that a broken config
  // is reported at once rather than on the day a flag is left out.
  ConfigValues config;
  if (const auto path = footprint_config_path(env)) config = read_config(*path);

  FootprintRates rates;
  if (flags.carbon_intensity)
    rates.carbon = parse_carbon_intensity(*flags.carbon_intensity, "--carbon-intensity");
  else if (env.carbon_intensity)
    rates.carbon = parse_carbon_intensity(*env.carbon_intensity, kCarbonIntensityEnv);
  else if (config.carbon_intensity)
    rates.carbon = parse_carbon_intensity(*config.carbon_intensity, config.source);

  if (flags.price)
    rates.price = parse_price(*flags.price, "--price");
  else if (env.price)
    rates.price = parse_price(*env.price, kPriceEnv);
  else if (config.price)
    rates.price = parse_price(*config.price, config.source);
  return rates;
}

}  // namespace wattwise
