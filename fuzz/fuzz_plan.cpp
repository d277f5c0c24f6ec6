// The knob and plan parser: what users type after --power-limit, --sm-clock, --mem-clock, --param and
// --order. The input's lines are, in turn: a power-limit spec, an SM clock spec, a memory clock spec, job
// knob specs, and last an order and a command argument with {placeholders}.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_harness.hpp"
#include "plan/knob.hpp"
#include "plan/plan.hpp"

namespace {

constexpr std::size_t kMaxRuns = 4096;  // a bigger plan is the user's choice, not a parser fault

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> lines;
  {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  if (lines.empty()) return 0;
  using namespace wattwise::plan;
  PlanSpec spec;
  const auto add = [&](auto parse) {
    wattwise::fuzz::expect_only_wattwise_errors("plan", [&] {
      Knob knob = parse();
      if (knob.from_supported_clocks) knob = resolve_supported_clocks(knob, {1980, 1500, 1200, 345});
      for (const auto& value : knob.values)
        if (knob.kind == KnobKind::kHardware) knob_number(knob.name, value);
      spec.knobs.push_back(std::move(knob));
    });
  };
  add([&] { return parse_power_limit_knob(lines[0]); });
  if (lines.size() > 1) add([&] { return parse_clock_knob(kSmClockKnob, lines[1]); });
  if (lines.size() > 2) add([&] { return parse_clock_knob(kMemClockKnob, lines[2]); });
  for (std::size_t i = 3; i + 1 < lines.size(); ++i) add([&] { return parse_job_knob(lines[i]); });
  wattwise::fuzz::expect_only_wattwise_errors("plan", [&] { spec.order = parse_run_order(lines.back()); });
  std::size_t runs = 1;
  for (const auto& knob : spec.knobs)
    runs *= std::max<std::size_t>(1, std::min(knob.values.size(), kMaxRuns + 1));
  if (runs > kMaxRuns) return 0;
  spec.seed = size;
  spec.repeats = 1 + size % 3;
  wattwise::fuzz::expect_only_wattwise_errors("plan", [&] {
    const Plan plan = make_plan(spec);
    hardware_settings_of(plan);
    plan_spec_to_json(plan.spec);
    for (const auto& run : plan.runs) substitute_params({lines.back(), "{power_limit_w}{batch}"}, run.params);
  });
  return 0;
}
