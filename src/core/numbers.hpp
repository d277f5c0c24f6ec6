#pragma once

// The one parser of numbers written as text (flags, CSV cells, knob values, protocol fields, files of the
// kernel): std::from_chars, so no locale, no leading space or '+', no hexadecimal; the whole text must be
// the number.

#include <charconv>
#include <concepts>
#include <optional>
#include <string_view>

namespace wattwise {

// A finite decimal number ("150", "232.5", "1e3", "-0.5"); nullopt for anything else: empty, trailing
// text, nan, inf, out of range.
std::optional<double> parse_number(std::string_view text);

// A whole number of type Int; nullopt for anything else (a '-' on an unsigned type, out of Int's range).
template <std::integral Int>
std::optional<Int> parse_integer(std::string_view text) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace wattwise
