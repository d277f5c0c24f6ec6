#include "plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/error.hpp"

namespace wattwise::plan {
namespace {

std::optional<double> as_number(const std::string& text) {
  try {
    std::size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// Numbers compare as numbers (64 < 128), anything else as text; numbers come before words.
bool value_less(const std::string& a, const std::string& b) {
  auto na = as_number(a);
  auto nb = as_number(b);
  if (na && nb) return *na < *nb;
  if (na != nb && (na || nb)) return na.has_value();
  return a < b;
}

HardwareSettings hardware_of(const std::vector<KnobSetting>& settings) {
  HardwareSettings hardware;
  for (const auto& s : settings) {
    if (s.knob == kPowerLimitKnob) hardware.power_limit_w = knob_number(s.knob, s.value);
    if (s.knob == kSmClockKnob) hardware.sm_clock_mhz = static_cast<unsigned>(knob_number(s.knob, s.value));
    if (s.knob == kMemClockKnob) hardware.mem_clock_mhz = static_cast<unsigned>(knob_number(s.knob, s.value));
  }
  return hardware;
}

PlannedRun make_run(std::vector<KnobSetting> settings, unsigned repeat, bool warmup) {
  PlannedRun run;
  run.warmup = warmup;
  run.repeat = repeat;
  run.hardware = hardware_of(settings);
  for (const auto& s : settings) run.params[s.knob] = s.value;
  run.settings = std::move(settings);
  return run;
}

// All combinations, the first knob varying slowest, each knob's values ascending.
std::vector<std::vector<KnobSetting>> ascending_combinations(const std::vector<Knob>& knobs) {
  std::vector<std::vector<KnobSetting>> combinations{{}};
  for (const Knob& knob : knobs) {
    std::vector<std::string> values = knob.values;
    std::stable_sort(values.begin(), values.end(), value_less);
    std::vector<std::vector<KnobSetting>> next;
    for (const auto& prefix : combinations) {
      for (const auto& value : values) {
        auto combination = prefix;
        combination.push_back({knob.name, value});
        next.push_back(std::move(combination));
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

void check_spec(const PlanSpec& spec) {
  if (spec.repeats == 0) throw usage_error("--repeat must be at least 1 (e.g. --repeat 3)");
  for (std::size_t i = 0; i < spec.knobs.size(); ++i) {
    const Knob& knob = spec.knobs[i];
    if (knob.from_supported_clocks) {
      throw Error(ErrorKind::kInternal,
                  fmt::format("knob {} is 'supported' but was not resolved", knob.name));
    }
    if (knob.values.empty()) throw usage_error(fmt::format("knob {} has no values", knob.name));
    for (std::size_t j = 0; j < i; ++j) {
      if (spec.knobs[j].name == knob.name) {
        throw usage_error(fmt::format("knob {} is given twice: give all its values in one flag", knob.name));
      }
    }
  }
}

}  // namespace

RunOrder parse_run_order(std::string_view text) {
  if (text == "ascending") return RunOrder::kAscending;
  if (text == "descending") return RunOrder::kDescending;
  if (text == "random") return RunOrder::kRandom;
  throw usage_error(fmt::format(
      "--order '{}' is not valid: use ascending, descending or random (e.g. --order random)", text));
}

std::string_view to_string(RunOrder order) {
  switch (order) {
    case RunOrder::kAscending:
      return "ascending";
    case RunOrder::kDescending:
      return "descending";
    case RunOrder::kRandom:
      return "random";
  }
  return "ascending";
}

Plan make_plan(const PlanSpec& spec) {
  check_spec(spec);
  auto combinations = ascending_combinations(spec.knobs);
  if (spec.order == RunOrder::kDescending) std::reverse(combinations.begin(), combinations.end());

  Plan plan;
  plan.spec = spec;
  std::vector<PlannedRun> measured;
  for (unsigned repeat = 0; repeat < spec.repeats; ++repeat) {
    for (const auto& combination : combinations) measured.push_back(make_run(combination, repeat, false));
  }
  if (spec.order == RunOrder::kRandom) seeded_shuffle(measured, spec.seed);

  // Warm-ups use the first measured run's settings, so the GPU is warm in the state the sweep starts in.
  for (unsigned w = 0; w < spec.warmup_runs; ++w) {
    plan.runs.push_back(make_run(measured.front().settings, w, true));
  }
  for (auto& run : measured) plan.runs.push_back(std::move(run));
  for (std::size_t i = 0; i < plan.runs.size(); ++i) plan.runs[i].index = i;
  return plan;
}

std::vector<HardwareSettings> hardware_settings_of(const Plan& plan) {
  std::vector<HardwareSettings> settings;
  for (const auto& run : plan.runs) settings.push_back(run.hardware);
  return settings;
}

std::vector<PlannedRun> runs_not_done(const Plan& plan, const std::set<std::size_t>& completed_indices) {
  std::vector<PlannedRun> remaining;
  for (const auto& run : plan.runs) {
    if (!completed_indices.contains(run.index)) remaining.push_back(run);
  }
  return remaining;
}

nlohmann::json plan_spec_to_json(const PlanSpec& spec) {
  nlohmann::json knobs = nlohmann::json::array();
  for (const Knob& knob : spec.knobs) {
    knobs.push_back({{"name", knob.name},
                     {"kind", knob.kind == KnobKind::kHardware ? "hardware" : "job"},
                     {"values", knob.values}});
  }
  return {{"knobs", knobs},
          {"repeats", spec.repeats},
          {"order", std::string(to_string(spec.order))},
          {"seed", spec.seed},
          {"warmup_runs", spec.warmup_runs}};
}

PlanSpec plan_spec_from_json(const nlohmann::json& json) {
  try {
    PlanSpec spec;
    for (const auto& knob : json.at("knobs")) {
      const std::string kind = knob.at("kind").get<std::string>();
      if (kind != "hardware" && kind != "job") throw std::runtime_error("unknown knob kind " + kind);
      spec.knobs.push_back(Knob{knob.at("name").get<std::string>(),
                                kind == "hardware" ? KnobKind::kHardware : KnobKind::kJob,
                                knob.at("values").get<std::vector<std::string>>(), false});
    }
    spec.repeats = json.at("repeats").get<unsigned>();
    spec.order = parse_run_order(json.at("order").get<std::string>());
    spec.seed = json.at("seed").get<std::uint64_t>();
    spec.warmup_runs = json.at("warmup_runs").get<unsigned>();
    return spec;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw data_error(fmt::format("the stored plan is not readable ({}): the database is damaged", e.what()));
  }
}

std::vector<std::string> substitute_params(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& params) {
  std::vector<std::string> result;
  result.reserve(argv.size());
  for (const std::string& arg : argv) {
    std::string out;
    std::size_t pos = 0;
    while (pos < arg.size()) {
      const std::size_t open = arg.find('{', pos);
      if (open == std::string::npos) break;
      const std::size_t close = arg.find('}', open + 1);
      if (close == std::string::npos) break;
      auto it = params.find(arg.substr(open + 1, close - open - 1));
      if (it == params.end()) {
        out.append(arg, pos, open + 1 - pos);  // keep the '{' and look for the next placeholder after it
        pos = open + 1;
        continue;
      }
      out.append(arg, pos, open - pos);
      out += it->second;
      pos = close + 1;
    }
    out.append(arg, pos, std::string::npos);
    result.push_back(std::move(out));
  }
  return result;
}

std::vector<std::pair<std::string, std::string>> param_environment(
    const std::map<std::string, std::string>& params) {
  std::vector<std::pair<std::string, std::string>> env;
  for (const auto& [name, value] : params) {
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    env.emplace_back("WATTWISE_PARAM_" + upper, value);
  }
  return env;
}

}  // namespace wattwise::plan
