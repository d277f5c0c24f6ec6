#pragma once

// The Prometheus text exposition format, version 0.0.4 (prometheus.io/docs/instrumenting/
// exposition_formats): one "# HELP" and one "# TYPE" line per metric family, then one line per sample,
// `name{label="value",...} number`. Label values escape backslash, double quote and line feed; HELP text
// escapes backslash and line feed. Samples carry no timestamp: Prometheus stamps each with its scrape.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wattwise::exporter {

// The Content-Type of a /metrics response in this format.
inline constexpr const char* kExpositionContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge };

using Labels = std::vector<std::pair<std::string, std::string>>;  // in the order they are written

struct Sample {
  Labels labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // [a-zA-Z_:][a-zA-Z0-9_:]*; a counter's ends in _total
  std::string help;
  MetricType type = MetricType::kGauge;
  std::vector<Sample> samples;
};

// Both also make the text valid UTF-8 (U+FFFD for bad bytes): the format requires it.
std::string escape_label_value(std::string_view value);
std::string escape_help(std::string_view help);
// A sample value as Prometheus parses it: shortest round-trip decimal, "NaN", "+Inf", "-Inf".
std::string format_value(double value);

// The exposition text of `families`, in order. A family without samples is left out (its HELP and TYPE
// would announce a metric that is not there). Throws an internal error for an invalid metric or label name
// or a counter not named *_total: those are bugs, not input.
std::string render(const std::vector<MetricFamily>& families);

}  // namespace wattwise::exporter
