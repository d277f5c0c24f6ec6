#include "experiment/node_agent.hpp"

#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "experiment/runner.hpp"
#include "safety/settings_access.hpp"

namespace wattwise::experiment {

std::vector<std::size_t> job_gpu_positions(const measure::MeasureOptions& options, std::size_t gpu_count) {
  std::vector<std::size_t> positions = options.gpu_positions;
  if (positions.empty()) {
    positions.resize(gpu_count);
    std::iota(positions.begin(), positions.end(), std::size_t{0});
  }
  if (options.job_gpu_count && *options.job_gpu_count < positions.size())
    positions.resize(*options.job_gpu_count);
  return positions;
}

AgentOutcome measure_under_settings(hw::GpuSystem& system, const std::vector<std::string>& argv,
                                    const measure::MeasureOptions& measure_options,
                                    const AgentOptions& options) {
  AgentOutcome outcome;
  if (options.settings.empty()) {
    outcome.measurement = measure::measure_command(system, argv, measure_options);
    return outcome;
  }
  const std::vector<std::size_t> job_gpus = job_gpu_positions(measure_options, system.count());
  const std::shared_ptr<const safety::SettingsAccess>& access = options.settings_access;
  if (!access) throw std::logic_error("measure_under_settings: settings to apply and no settings path");
  access->validate(system, job_gpus, {options.settings});
  const std::unique_ptr<safety::HeldSettings> held = access->hold(system, job_gpus, {options.settings});
  outcome.changed_by = std::string(access->name());
  try {
    held->apply(options.settings);
    outcome.read_back = read_back_settings(system, job_gpus);
    outcome.measurement = measure::measure_command(system, argv, measure_options);
  } catch (...) {
    // Restore before the exception leaves: the caller prints the error, the GPUs are already back.
    const safety::RestoreReport report = held->restore();
    if (!report.all_ok())
      std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", report.summary().c_str());
    throw;
  }
  outcome.changed_settings = true;
  // A GPU whose driver stopped answering is left to the watchdog with its journal; the others go back.
  outcome.restore = held->restore(outcome.measurement.unanswering_gpus());
  return outcome;
}

nlohmann::json settings_json(const plan::HardwareSettings& asked, const AgentOutcome& outcome,
                             hw::GpuSystem& system, const std::vector<std::size_t>& job_gpus) {
  if (asked.empty()) return nullptr;
  const auto optional = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(); };
  nlohmann::json gpus = nlohmann::json::array();
  for (std::size_t i = 0; i < job_gpus.size() && i < outcome.read_back.size(); ++i) {
    const auto& r = outcome.read_back[i];
    gpus.push_back({{"uuid", system.gpu(job_gpus[i]).identity().uuid},
                    {"index", r.gpu_index},
                    {"enforced_power_limit_w", optional(r.enforced_power_limit_w)},
                    {"sm_clock_mhz", optional(r.sm_clock_mhz)},
                    {"mem_clock_mhz", optional(r.mem_clock_mhz)}});
  }
  return {{"power_limit_w", optional(asked.power_limit_w)},
          {"sm_clock_mhz", optional(asked.sm_clock_mhz)},
          {"mem_clock_mhz", optional(asked.mem_clock_mhz)},
          {"gpus", gpus},
          {"restored", outcome.changed_settings && outcome.restore.all_ok()},
          {"changed_by", outcome.changed_by},
          {"restore_failures", outcome.restore.failed_uuids()}};
}

}  // namespace wattwise::experiment
