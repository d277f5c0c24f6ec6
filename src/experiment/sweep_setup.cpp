#include "experiment/sweep_setup.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "plan/knob.hpp"

namespace wattwise::experiment {

std::optional<analysis::Setting> default_reference(const plan::PlanSpec& spec, hw::GpuReadings& gpu) {
  analysis::Setting reference;
  for (const auto& knob : spec.knobs) {
    if (knob.values.empty()) return std::nullopt;
    if (knob.name == plan::kPowerLimitKnob) {
      const auto limits = gpu.power_limits();
      if (!limits) return std::nullopt;
      const bool swept = std::any_of(knob.values.begin(), knob.values.end(), [&](const std::string& v) {
        return std::abs(plan::knob_number(knob.name, v) - limits->default_w) < 1e-6;
      });
      if (!swept) return std::nullopt;
      reference[knob.name] = limits->default_w;
    } else if (knob.kind == plan::KnobKind::kJob) {
      try {
        reference[knob.name] = plan::knob_number(knob.name, knob.values.front());
      } catch (const Error&) {
        return std::nullopt;  // a non-numeric job knob cannot be analysed as a number anyway
      }
    } else {
      return std::nullopt;
    }
  }
  if (reference.empty()) return std::nullopt;
  return reference;
}

}  // namespace wattwise::experiment
