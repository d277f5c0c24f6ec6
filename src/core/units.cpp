#include "core/units.hpp"

#include <cmath>

#include <fmt/format.h>

namespace wattwise {

namespace {
const char* const kAbsent = "n/a";
}

std::string format_energy_j(std::optional<double> joules) {
  if (!joules) return kAbsent;
  const double j = *joules;
  if (std::fabs(j) >= 1e6) return fmt::format("{:.3f} MJ", j / 1e6);
  if (std::fabs(j) >= 1e4) return fmt::format("{:.2f} kJ", j / 1e3);
  if (std::fabs(j) >= 100) return fmt::format("{:.1f} J", j);
  return fmt::format("{:.3f} J", j);
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

std::string format_number(std::optional<double> value, int decimals) {
  if (!value) return kAbsent;
  return fmt::format("{:.{}f}", *value, decimals);
}

}  // namespace wattwise
