#include "analysis/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/error.hpp"
#include "core/numbers.hpp"

namespace wattwise::analysis {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

constexpr const char* kMetricChoices = "E, edp, ed2p, eds:K (K > 1, e.g. eds:1.5), gain-loss, time";

MetricSpec parse_eds(const std::string& original, const std::string& k_text) {
  const auto k = parse_number(k_text);
  if (!k || *k <= 1) {
    throw usage_error(
        fmt::format("metric '{}': k must be a number above 1 (the slowdown accepted at zero "
                    "energy), e.g. eds:1.5",
                    original));
  }
  return {MetricKind::kEds, *k};
}

}  // namespace

std::string MetricSpec::name() const {
  switch (kind) {
    case MetricKind::kEnergy:
      return "E";
    case MetricKind::kEdp:
      return "EDP";
    case MetricKind::kEd2p:
      return "ED2P";
    case MetricKind::kGainLoss:
      return "gain-loss";
    case MetricKind::kTime:
      return "time";
    case MetricKind::kEds: {
      std::string k_text = fmt::format("{}", k);
      if (k_text.find_first_of(".e") == std::string::npos) k_text += ".0";
      return fmt::format("EDS(k={})", k_text);
    }
  }
  return "?";
}

double metric_value(const MetricSpec& metric, double energy_j, double time_s, const ReferencePoint& ref) {
  const double e = energy_j / ref.energy_j;
  const double t = time_s / ref.time_s;
  switch (metric.kind) {
    case MetricKind::kEnergy:
      return e;
    case MetricKind::kEdp:
      return e * t;
    case MetricKind::kEd2p:
      return e * t * t;
    case MetricKind::kEds:
      return (metric.k - 1) / metric.k * e + 1 / metric.k * t;
    case MetricKind::kGainLoss:
      return 100 * (1 - e) - 100 * (t - 1);
    case MetricKind::kTime:
      return t;
  }
  return 0;
}

MetricSpec parse_metric(const std::string& text) {
  const std::string name = lower(text);
  if (name == "e" || name == "energy") return {MetricKind::kEnergy};
  if (name == "edp") return {MetricKind::kEdp};
  if (name == "ed2p") return {MetricKind::kEd2p};
  if (name == "gain-loss") return {MetricKind::kGainLoss};
  if (name == "time" || name == "t") return {MetricKind::kTime};
  if (name.starts_with("eds:")) return parse_eds(text, name.substr(4));
  if (name.starts_with("eds(k=") && name.ends_with(")"))
    return parse_eds(text, name.substr(6, name.size() - 7));
  throw usage_error(fmt::format("unknown metric '{}'; choose from {}", text, kMetricChoices));
}

std::vector<MetricSpec> default_metrics() {
  return {{MetricKind::kEnergy},   {MetricKind::kEdp},      {MetricKind::kEd2p}, {MetricKind::kEds, 2.0},
          {MetricKind::kEds, 1.5}, {MetricKind::kGainLoss}, {MetricKind::kTime}};
}

std::vector<MetricSpec> metrics_with(const std::vector<std::string>& extra) {
  std::vector<MetricSpec> metrics = default_metrics();
  for (const std::string& text : extra) {
    const MetricSpec metric = parse_metric(text);
    if (std::find(metrics.begin(), metrics.end(), metric) == metrics.end()) metrics.push_back(metric);
  }
  return metrics;
}

double parse_max_slowdown(const std::string& text) {
  std::string number = text;
  const bool percent_sign = !number.empty() && number.back() == '%';
  if (percent_sign) number.pop_back();
  const auto percent = parse_number(number);
  if (!percent || *percent < 0) {
    throw usage_error(
        fmt::format("--max-slowdown '{}': expected a percentage such as 10%, or none", text));
  }
  // 0.1 may be a fraction (10%) or a percentage (0.1%): the user says which.
  if (!percent_sign && *percent > 0 && *percent < 1) {
    throw usage_error(fmt::format("--max-slowdown '{}' is ambiguous: write {:g}% for a fraction of {}, or {}% "
                                  "for {} percent",
                                  text, *percent * 100, text, text, text));
  }
  return *percent / 100.0;
}

std::optional<double> parse_max_slowdown_flag(const std::string& text) {
  if (text == "none") return std::nullopt;
  return parse_max_slowdown(text);
}

}  // namespace wattwise::analysis
