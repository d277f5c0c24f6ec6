#include "exporter/exposition.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "core/text.hpp"

namespace wattwise::exporter {
namespace {

bool valid_name(std::string_view name, bool allow_colon) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

void check_family(const MetricFamily& family) {
  if (!valid_name(family.name, true))
    throw Error(ErrorKind::kInternal, fmt::format("invalid metric name '{}'", family.name));
  if (family.type == MetricType::kCounter && !family.name.ends_with("_total"))
    throw Error(ErrorKind::kInternal, fmt::format("counter '{}' must end in _total", family.name));
  for (const Sample& sample : family.samples) {
    for (const auto& [name, value] : sample.labels) {
      // Names starting with __ are reserved for Prometheus itself.
      if (!valid_name(name, false) || name.starts_with("__"))
        throw Error(ErrorKind::kInternal, fmt::format("invalid label name '{}' on {}", name, family.name));
    }
  }
}

}  // namespace

std::string escape_label_value(std::string_view raw) {
  // Prometheus refuses a whole scrape for one label value that is not valid UTF-8.
  const std::string value = valid_utf8(raw);
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view raw) {
  const std::string help = valid_utf8(raw);
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string render(const std::vector<MetricFamily>& families) {
  std::string out;
  for (const MetricFamily& family : families) {
    check_family(family);
    if (family.samples.empty()) continue;
    out += fmt::format("# HELP {} {}\n", family.name, escape_help(family.help));
    out +=
        fmt::format("# TYPE {} {}\n", family.name, family.type == MetricType::kCounter ? "counter" : "gauge");
    for (const Sample& sample : family.samples) {
      out += family.name;
      if (!sample.labels.empty()) {
        out += '{';
        for (std::size_t i = 0; i < sample.labels.size(); ++i) {
          if (i > 0) out += ',';
          out +=
              fmt::format("{}=\"{}\"", sample.labels[i].first, escape_label_value(sample.labels[i].second));
        }
        out += '}';
      }
      out += ' ';
      out += format_value(sample.value);
      out += '\n';
    }
  }
  return out;
}

}  // namespace wattwise::exporter
