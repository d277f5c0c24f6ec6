#include "plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "core/error.hpp"

namespace wattwise::plan {
namespace {

// Numbers compare as numbers (64 < 128), anything else as text; numbers come before words (never nan,
// which would break the sort's ordering).
bool value_less(const std::string& a, const std::string& b) {
  auto na = knob_value_number(a);
  auto nb = knob_value_number(b);
  if (na && nb) return *na < *nb;
  if (na != nb && (na || nb)) return na.has_value();
  return a < b;
}

// A clock in whole MHz; checked before the cast, which is undefined for values an unsigned cannot hold.
unsigned clock_mhz(const KnobSetting& s) {
  const double mhz = knob_number(s.knob, s.value);
  if (!(mhz >= 0 && mhz <= kMaxClockMhz) || mhz != std::floor(mhz))
    throw usage_error(
        fmt::format("knob {} has value '{}': give whole MHz from 0 to {}", s.knob, s.value, kMaxClockMhz));
  return static_cast<unsigned>(mhz);
}

HardwareSettings hardware_of(const std::vector<KnobSetting>& settings) {
  HardwareSettings hardware;
  for (const auto& s : settings) {
    if (s.knob == kPowerLimitKnob) hardware.power_limit_w = knob_number(s.knob, s.value);
    if (s.knob == kSmClockKnob) hardware.sm_clock_mhz = clock_mhz(s);
    if (s.knob == kMemClockKnob) hardware.mem_clock_mhz = clock_mhz(s);
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
  // The plan is built in memory before the first run: refuse a size no sweep could finish.
  double runs = static_cast<double>(spec.repeats) + 0.0;
  for (const Knob& knob : spec.knobs) runs *= static_cast<double>(knob.values.size());
  runs += spec.warmup_runs;
  if (runs > static_cast<double>(kMaxPlanRuns))
    throw usage_error(fmt::format("the plan has {:.0f} runs, more than {}: sweep fewer values or repeats",
                                  runs, kMaxPlanRuns));
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

bool changes_hardware(const std::vector<HardwareSettings>& settings) {
  return std::any_of(settings.begin(), settings.end(), [](const HardwareSettings& s) { return !s.empty(); });
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

std::vector<CommandPiece> command_pieces(const std::string& arg) {
  std::vector<CommandPiece> pieces;
  auto literal = [&](std::string_view text) {
    if (pieces.empty() || pieces.back().is_placeholder) pieces.push_back({});
    pieces.back().text += text;
  };
  auto identifier_end = [&](std::size_t from) {
    std::size_t end = from;
    while (end < arg.size() && (std::isalnum(static_cast<unsigned char>(arg[end])) || arg[end] == '_')) ++end;
    const bool starts_well = end > from && !std::isdigit(static_cast<unsigned char>(arg[from]));
    return starts_well ? end : from;
  };
  std::size_t pos = 0;
  while (pos < arg.size()) {
    if (arg[pos] != '{') {
      literal(std::string_view(arg).substr(pos, 1));
      ++pos;
      continue;
    }
    // {{name}}: the literal text {name}.
    if (pos + 1 < arg.size() && arg[pos + 1] == '{') {
      const std::size_t end = identifier_end(pos + 2);
      if (end > pos + 2 && arg.compare(end, 2, "}}") == 0) {
        literal(std::string_view(arg).substr(pos + 1, end - pos));
        pos = end + 2;
        continue;
      }
    }
    // {name}: a placeholder; ${name} keeps the '$' beside it so callers can tell a shell variable.
    const std::size_t end = identifier_end(pos + 1);
    if (end > pos + 1 && end < arg.size() && arg[end] == '}') {
      CommandPiece piece;
      piece.is_placeholder = true;
      piece.text = arg.substr(pos + 1, end - pos - 1);
      piece.after_dollar = pos > 0 && arg[pos - 1] == '$';
      pieces.push_back(std::move(piece));
      pos = end + 1;
      continue;
    }
    literal("{");  // any other brace is the job's own
    ++pos;
  }
  return pieces;
}

std::vector<std::string> substitute_params(const std::vector<std::string>& argv,
                                           const std::map<std::string, std::string>& params) {
  std::vector<std::string> result;
  result.reserve(argv.size());
  for (const std::string& arg : argv) {
    std::string out;
    for (const auto& piece : command_pieces(arg)) {
      if (!piece.is_placeholder) {
        out += piece.text;
      } else if (auto it = params.find(piece.text); it != params.end()) {
        out += it->second;
      } else {
        out += "{" + piece.text + "}";  // not a knob: check_placeholders refuses it before any run
      }
    }
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
