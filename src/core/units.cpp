#include "core/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace wattwise {

namespace {
const char* const kAbsent = "n/a";

// A quantity in the unit its magnitude prints in: value / divisor, with that many decimals.
struct Scaled {
  double divisor = 1;
  int decimals = 0;
  const char* unit = "";
};

Scaled energy_scale(double j) {
  if (std::fabs(j) >= 1e6) return {1e6, 3, "MJ"};
  if (std::fabs(j) >= 1e4) return {1e3, 2, "kJ"};
  if (std::fabs(j) >= 100) return {1, 1, "J"};
  return {1, 3, "J"};
}

// The spread in the mean's unit, with at least the mean's decimals and two significant digits (up to
// four more decimals): "68.68 ± 1.02 kJ", "294.98 ± 0.0041 s", never "± 0.00".
std::string with_spread(double mean, double stddev, const Scaled& scale) {
  const double spread = std::fabs(stddev) / scale.divisor;
  int decimals = scale.decimals;
  while (decimals < scale.decimals + 4 && spread > 0 && spread < 10 * std::pow(10.0, -decimals)) ++decimals;
  return fmt::format("{:.{}f} ± {:.{}f} {}", mean / scale.divisor, scale.decimals, spread, decimals,
                     scale.unit);
}
}  // namespace

std::string format_energy_j(std::optional<double> joules) {
  if (!joules) return kAbsent;
  const Scaled scale = energy_scale(*joules);
  return fmt::format("{:.{}f} {}", *joules / scale.divisor, scale.decimals, scale.unit);
}

std::string format_energy_spread_j(std::optional<double> mean_j, std::optional<double> stddev_j) {
  if (!mean_j || !stddev_j) return format_energy_j(mean_j);
  return with_spread(*mean_j, *stddev_j, energy_scale(*mean_j));
}

std::string format_energy_bar_j(std::optional<double> joules, double bar_j) {
  if (!joules || !(bar_j > 0)) return format_energy_j(joules);
  return with_spread(*joules, bar_j, energy_scale(*joules));
}

std::string format_seconds_spread(std::optional<double> mean_s, std::optional<double> stddev_s) {
  // Minutes and seconds do not take a spread well: from 600 s on, seconds with two decimals.
  if (!mean_s || !stddev_s) return format_seconds(mean_s);
  return with_spread(*mean_s, *stddev_s, Scaled{1, *mean_s >= 10 ? 2 : 3, "s"});
}

std::string format_power_w(std::optional<double> watts) {
  if (!watts) return kAbsent;
  return fmt::format("{:.1f} W", *watts);
}

std::string format_seconds(std::optional<double> seconds) {
  if (!seconds) return kAbsent;
  const double s = *seconds;
  if (s >= 600) {
    const auto whole = static_cast<long long>(std::llround(s));
    return fmt::format("{} min {:02d} s", whole / 60, static_cast<int>(whole % 60));
  }
  if (s >= 10) return fmt::format("{:.2f} s", s);
  return fmt::format("{:.3f} s", s);
}

std::string format_percent(std::optional<double> percent, bool with_sign) {
  if (!percent) return kAbsent;
  return with_sign ? fmt::format("{:+.1f}%", *percent) : fmt::format("{:.1f}%", *percent);
}

std::string format_percent_over(double percent, double limit_pct) {
  int decimals = 1;
  while (decimals < 4 && !(std::round(percent * std::pow(10, decimals)) / std::pow(10, decimals) > limit_pct))
    ++decimals;
  return fmt::format("{:+.{}f}%", percent, decimals);
}

std::string format_number(std::optional<double> value, int decimals) {
  if (!value) return kAbsent;
  return fmt::format("{:.{}f}", *value, decimals);
}

}  // namespace wattwise
