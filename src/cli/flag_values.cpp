#include "cli/flag_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace wattwise::cli {

Nanos parse_duration(std::string_view flag, const std::string& text, DurationUnit unit, double min,
                     double max) {
  const char* unit_name = unit == DurationUnit::kSeconds ? "seconds" : "milliseconds";
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool number = !text.empty() && ec == std::errc() && end == text.data() + text.size();
  if (!number || !std::isfinite(value) || value < min || value > max) {
    throw usage_error(fmt::format("{} '{}' is not valid: give {} as a number from {} to {} (e.g. {} {})",
                                  flag, text, unit_name, min, max, flag, std::max(min, 1.0) * 10));
  }
  const double ns = unit == DurationUnit::kSeconds ? value * 1e9 : value * 1e6;
  return Nanos(static_cast<Nanos::rep>(std::llround(ns)));
}

std::size_t parse_count(std::string_view flag, const std::string& text, std::size_t min, std::size_t max) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw usage_error(
        fmt::format("{} '{}' is not valid: give a whole number from {} to {}", flag, text, min, max));
  }
  return value;
}

}  // namespace wattwise::cli
