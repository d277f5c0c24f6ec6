#include "plan/knob.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::plan {
namespace {

// A range that expands to more values than this is almost certainly a typo (a step of 0.001).
constexpr std::size_t kMaxValuesPerKnob = 10'000;

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = text.find(separator, start);
    parts.push_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// 150 prints as "150", 232.5 as "232.5": the shortest text that reads back as the same number.
std::string format_number(double value) {
  return fmt::format("{}", value);
}

// Expands START:STOP:STEP (inclusive) or A,B,C into the value texts; nullopt on bad syntax.
std::optional<std::vector<std::string>> expand_numeric(std::string_view spec, bool integers_only) {
  auto is_acceptable = [&](double v) { return !integers_only || (v >= 0 && v == std::floor(v)); };
  std::vector<std::string> values;
  if (spec.find(':') != std::string_view::npos) {
    auto parts = split(spec, ':');
    if (parts.size() != 3) return std::nullopt;
    auto start = parse_number(parts[0]);
    auto stop = parse_number(parts[1]);
    auto step = parse_number(parts[2]);
    if (!start || !stop || !step || *step <= 0 || *stop < *start) return std::nullopt;
    if (!is_acceptable(*start) || !is_acceptable(*step)) return std::nullopt;
    // Values are start + i*step (not a running sum) so 0.1 steps do not accumulate rounding errors;
    // the tolerance keeps an exact STOP that rounding would push just outside the range.
    const double count = std::floor((*stop - *start) / *step + 1e-9) + 1;
    if (count > static_cast<double>(kMaxValuesPerKnob)) return std::nullopt;
    for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
      values.push_back(format_number(*start + static_cast<double>(i) * *step));
    }
    return values;
  }
  for (std::string_view part : split(spec, ',')) {
    auto value = parse_number(part);
    if (!value || !is_acceptable(*value)) return std::nullopt;
    values.push_back(format_number(*value));
  }
  return values;
}

// Printable text: valid UTF-8 without control characters, so a value can be shown, stored as JSON and
// passed in an argv without surprises.
bool is_printable_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) return false;
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if ((c & 0xE0) == 0xC0) {
      length = 2;
      code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    const std::uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < smallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    if (code >= 0x80 && code < 0xA0) return false;  // C1 control characters
    i += length;
  }
  return true;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

std::optional<double> knob_value_number(std::string_view value) {
  return parse_number(value);
}

double knob_number(const std::string& knob_name, const std::string& value) {
  auto number = knob_value_number(value);
  if (!number)
    throw usage_error(fmt::format("knob {} has value '{}', which is not a number", knob_name, value));
  return *number;
}

Knob parse_power_limit_knob(std::string_view spec) {
  auto values = expand_numeric(spec, false);
  const auto out_of_range = [](const std::string& v) {
    const auto w = parse_number(v);
    return !w || *w <= 0 || *w > kMaxPowerLimitW;
  };
  if (!values || std::any_of(values->begin(), values->end(), out_of_range)) {
    throw usage_error(fmt::format(
        "--power-limit '{}' is not valid: give watts as a range START:STOP:STEP (e.g. 150:300:5) or a list "
        "(e.g. 150,200,250)",
        spec));
  }
  return Knob{std::string(kPowerLimitKnob), KnobKind::kHardware, std::move(*values), false};
}

Knob parse_clock_knob(std::string_view knob_name, std::string_view spec) {
  const bool sm = knob_name == kSmClockKnob;
  if (!sm && knob_name != kMemClockKnob) {
    throw Error(ErrorKind::kInternal,
                fmt::format("parse_clock_knob called for unknown knob '{}'", knob_name));
  }
  const char* flag = sm ? "--sm-clock" : "--mem-clock";
  if (spec == "supported") return Knob{std::string(knob_name), KnobKind::kHardware, {}, true};
  auto values = expand_numeric(spec, true);
  const auto out_of_range = [](const std::string& v) {
    const auto mhz = parse_number(v);
    return !mhz || *mhz <= 0 || *mhz > kMaxClockMhz;
  };
  if (!values || std::any_of(values->begin(), values->end(), out_of_range)) {
    throw usage_error(fmt::format(
        "{} '{}' is not valid: give whole MHz as a range START:STOP:STEP (e.g. 1000:1980:90), a list "
        "(e.g. 1410,1755) or 'supported'",
        flag, spec));
  }
  return Knob{std::string(knob_name), KnobKind::kHardware, std::move(*values), false};
}

Knob parse_job_knob(std::string_view spec) {
  const std::size_t eq = spec.find('=');
  const auto usage = [&](std::string_view why) {
    return usage_error(
        fmt::format("--param '{}' is not valid ({}): write NAME=V1,V2,... (e.g. batch=64,128,256) or "
                    "NAME=START:STOP:STEP "
                    "(e.g. batch=32:256:32)",
                    spec, why));
  };
  if (eq == std::string_view::npos) throw usage("no '='");
  const std::string_view name = spec.substr(0, eq);
  const std::string_view list = spec.substr(eq + 1);
  if (!is_identifier(name)) throw usage("the name must be letters, digits and '_'");
  if (name == kPowerLimitKnob || name == kSmClockKnob || name == kMemClockKnob) {
    throw usage("that name is a hardware knob: use --power-limit, --sm-clock or --mem-clock");
  }
  std::vector<std::string> values;
  if (list.find(':') != std::string_view::npos) {
    auto expanded = expand_numeric(list, false);
    if (!expanded) throw usage("bad range");
    values = std::move(*expanded);
  } else {
    for (std::string_view part : split(list, ',')) {
      if (part.empty()) throw usage("empty value");
      if (!is_printable_utf8(part)) throw usage("a value has a control character or is not UTF-8");
      values.emplace_back(part);
    }
  }
  std::set<std::string> distinct(values.begin(), values.end());
  if (distinct.size() != values.size()) throw usage("a value is repeated; use --repeat for repeats");
  return Knob{std::string(name), KnobKind::kJob, std::move(values), false};
}

Knob resolve_supported_clocks(const Knob& knob, const std::vector<unsigned>& supported_mhz) {
  if (!knob.from_supported_clocks) return knob;
  if (supported_mhz.empty()) {
    throw environment_error(
        fmt::format("the GPU reports no supported clocks for {}: give explicit values instead of 'supported'",
                    knob.name));
  }
  std::set<unsigned> sorted(supported_mhz.begin(), supported_mhz.end());
  Knob resolved = knob;
  resolved.from_supported_clocks = false;
  resolved.values.clear();
  for (unsigned mhz : sorted) resolved.values.push_back(std::to_string(mhz));
  return resolved;
}

}  // namespace wattwise::plan
