#include "plan/validate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/error.hpp"

namespace wattwise::plan {
namespace {

std::vector<std::string> knob_names(const PlanSpec& spec) {
  std::vector<std::string> names;
  for (const auto& knob : spec.knobs) names.push_back(knob.name);
  return names;
}

const Knob* find_knob(const PlanSpec& spec, const std::string& name) {
  for (const auto& knob : spec.knobs)
    if (knob.name == name) return &knob;
  return nullptr;
}

}  // namespace

void check_placeholders(const std::vector<std::string>& argv, const PlanSpec& spec, std::string_view what) {
  for (const auto& arg : argv) {
    for (const auto& piece : command_pieces(arg)) {
      if (!piece.is_placeholder || piece.after_dollar || find_knob(spec, piece.text)) continue;
      const auto names = knob_names(spec);
      throw usage_error(
          fmt::format("{} has {{{}}}, but no knob is named {} ({}); write {{{{{}}}}} for a literal {{{}}}",
                      what, piece.text, piece.text,
                      names.empty() ? "there are no knobs: add --param " + piece.text + "=V1,V2"
                                    : fmt::format("knobs: {}", fmt::join(names, ", ")),
                      piece.text, piece.text));
    }
  }
}

void check_numeric_job_knobs(const PlanSpec& spec) {
  for (const auto& knob : spec.knobs) {
    if (knob.kind != KnobKind::kJob) continue;
    for (const auto& value : knob.values) {
      if (knob_value_number(value)) continue;
      throw usage_error(fmt::format(
          "--param {}: '{}' is not a number, and the analysis compares settings as numbers; number the "
          "choices ({}=0,1,... and map them in the job) or sweep each one into its own --db",
          knob.name, value, knob.name));
    }
  }
}

void check_reference(const std::map<std::string, double>& reference, const PlanSpec& spec) {
  for (const auto& entry : reference) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one in the lambda below.
    const std::string& name = entry.first;
    const double value = entry.second;
    const Knob* knob = find_knob(spec, name);
    if (knob == nullptr) {
      const auto names = knob_names(spec);
      throw usage_error(fmt::format("--reference names {}, which the plan does not sweep (knobs: {})", name,
                                    names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
    }
    const bool planned = std::any_of(knob->values.begin(), knob->values.end(), [&](const std::string& v) {
      const auto n = knob_value_number(v);
      return n && std::abs(*n - value) <= 1e-9 * std::max(1.0, std::abs(value));
    });
    if (!planned)
      throw usage_error(fmt::format("--reference {}={:g} is not in the plan: {} takes {}", name, value, name,
                                    fmt::join(knob->values, ", ")));
  }
  for (const auto& knob : spec.knobs) {
    if (knob.values.size() > 1 && !reference.contains(knob.name))
      throw usage_error(fmt::format("--reference leaves {} open: add {}=VALUE (one of {})", knob.name,
                                    knob.name, fmt::join(knob.values, ", ")));
  }
}

void check_clocks(const Plan& plan, const SupportedClocks& gpu) {
  auto check = [&](const char* flag, std::optional<unsigned> mhz, const std::vector<unsigned>& supported) {
    if (!mhz || supported.empty()) return;
    const auto [lo, hi] = std::minmax_element(supported.begin(), supported.end());
    if (*mhz < *lo || *mhz > *hi)
      throw usage_error(
          fmt::format("{} {} MHz is outside the range {}-{} MHz that {} supports (`wattwise info` "
                      "lists its clocks)",
                      flag, *mhz, *lo, *hi, gpu.gpu));
  };
  for (const auto& run : plan.runs) {
    check("--sm-clock", run.hardware.sm_clock_mhz, gpu.sm_mhz);
    check("--mem-clock", run.hardware.mem_clock_mhz, gpu.mem_mhz);
  }
}

}  // namespace wattwise::plan
