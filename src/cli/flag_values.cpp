#include "cli/flag_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::cli {

Nanos parse_duration(std::string_view flag, const std::string& text, DurationUnit unit, double min,
                     double max) {
  const char* unit_name = unit == DurationUnit::kSeconds ? "seconds" : "milliseconds";
  const auto number = parse_number(text);
  const double value = number.value_or(0);
  if (!number || value < min || value > max) {
    throw usage_error(fmt::format("{} '{}' is not valid: give {} as a number from {} to {} (e.g. {} {})",
                                  flag, text, unit_name, min, max, flag, std::max(min, 1.0) * 10));
  }
  const double ns = unit == DurationUnit::kSeconds ? value * 1e9 : value * 1e6;
  return Nanos(static_cast<Nanos::rep>(std::llround(ns)));
}

std::size_t parse_count(std::string_view flag, const std::string& text, std::size_t min, std::size_t max) {
  const auto value = parse_integer<std::size_t>(text);
  if (!value || *value < min || *value > max) {
    throw usage_error(
        fmt::format("{} '{}' is not valid: give a whole number from {} to {}", flag, text, min, max));
  }
  return *value;
}

}  // namespace wattwise::cli
