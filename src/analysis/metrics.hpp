#pragma once

#include <optional>
#include <string>
#include <vector>

namespace wattwise::analysis {

// The metrics of DESIGN.md "Metrics", all computed on means and normalised to the reference.
enum class MetricKind {
  kEnergy,    // E / E_ref
  kEdp,       // (E * t) / (E_ref * t_ref)
  kEd2p,      // (E * t^2) / (E_ref * t_ref^2)
  kEds,       // alpha * E + beta * t, alpha = (k - 1) / (k * E_ref), beta = 1 / (k * t_ref); EDS(ref) = 1
  kGainLoss,  // 100 * (1 - E / E_ref) - 100 * (t / t_ref - 1), in percent; higher is better
  kTime,      // t / t_ref
};

struct MetricSpec {
  MetricKind kind = MetricKind::kEnergy;
  double k = 0;  // only for kEds: the slowdown accepted at zero energy

  // The stable names of the JSON contract: E, EDP, ED2P, EDS(k=2.0), gain-loss, time. k is printed in its
  // shortest form with at least one decimal (2 -> 2.0, 1.25 -> 1.25).
  std::string name() const;
  bool higher_is_better() const { return kind == MetricKind::kGainLoss; }
  bool operator==(const MetricSpec& other) const { return kind == other.kind && k == other.k; }
};

// Reference values the metrics are normalised to.
struct ReferencePoint {
  double energy_j = 0;
  double time_s = 0;
};

double metric_value(const MetricSpec& metric, double energy_j, double time_s, const ReferencePoint& ref);

// Parses a --metric name: "E", "edp", "ed2p", "eds:1.5" (k > 1), "gain-loss", "time" (case-insensitive;
// the JSON names such as "EDS(k=2.0)" are accepted too). A bad name is a usage_error listing the choices.
MetricSpec parse_metric(const std::string& text);

// E, EDP, ED2P, EDS(k=2.0), EDS(k=1.5), gain-loss, time: the order of the JSON contract.
std::vector<MetricSpec> default_metrics();

// The default metrics followed by those named in `extra` that are not already there.
std::vector<MetricSpec> metrics_with(const std::vector<std::string>& extra);

// Parses --max-slowdown: "10%" or "10" (both percent) -> 0.10. Negative or non-numeric is a usage_error, and
// so is a bare number between 0 and 1 ("0.1": 10% or 0.1%? the message says how to write either).
double parse_max_slowdown(const std::string& text);
// The same, and "none" (no limit) -> nullopt.
std::optional<double> parse_max_slowdown_flag(const std::string& text);

}  // namespace wattwise::analysis
