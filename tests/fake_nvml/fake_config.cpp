#include "fake_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace wattwise::fake_nvml {

PowerProfile::PowerProfile(std::vector<PowerSegment> segments) : segments_(std::move(segments)) {
  for (const PowerSegment& segment : segments_) {
    if (!(segment.duration_s > 0))
      throw std::runtime_error("fake NVML: profile segment durations must be > 0");
    period_s_ += segment.duration_s;
  }
  if (segments_.empty()) throw std::runtime_error("fake NVML: a power profile needs at least one segment");
}

double PowerProfile::power_w(double t_s) const {
  double phase = t_s - std::floor(t_s / period_s_) * period_s_;
  for (const PowerSegment& segment : segments_) {
    if (phase < segment.duration_s) return segment.watts;
    phase -= segment.duration_s;
  }
  return segments_.back().watts;  // rounding at the very end of a period
}

double PowerProfile::integral_from_zero_j(double t_s, double cap_w) const {
  const double periods = std::floor(t_s / period_s_);
  double per_period_j = 0;
  for (const PowerSegment& segment : segments_)
    per_period_j += std::min(segment.watts, cap_w) * segment.duration_s;
  double phase = t_s - periods * period_s_;
  double partial_j = 0;
  for (const PowerSegment& segment : segments_) {
    const double part_s = std::min(phase, segment.duration_s);
    if (part_s <= 0) break;
    partial_j += std::min(segment.watts, cap_w) * part_s;
    phase -= part_s;
  }
  return periods * per_period_j + partial_j;
}

double PowerProfile::energy_j(double t0_s, double t1_s, double cap_w) const {
  return integral_from_zero_j(t1_s, cap_w) - integral_from_zero_j(t0_s, cap_w);
}

bool FakeGpuConfig::is_unsupported(const std::string& call) const {
  return std::find(unsupported.begin(), unsupported.end(), call) != unsupported.end();
}

double FakeGpuConfig::cost_us(const std::string& call, const std::map<std::string, double>& global) const {
  if (const auto own = call_cost_us.find(call); own != call_cost_us.end()) return own->second;
  const auto shared = global.find(call);
  return shared == global.end() ? 0 : shared->second;
}

bool ErrorInjection::applies_to(const std::string& call, double since_init_s) const {
  if (rate <= 0 || since_init_s < after_s) return false;
  if (until_s && since_init_s >= *until_s) return false;
  const bool control = call.find("Set") != std::string::npos || call.find("Reset") != std::string::npos;
  if (control && !controls) return false;
  return calls.empty() || std::find(calls.begin(), calls.end(), call) != calls.end();
}

bool HangInjection::matches(const std::string& call) const {
  const bool control = call.find("Set") != std::string::npos || call.find("Reset") != std::string::npos;
  if (control && !controls) return false;
  return calls.empty() || std::find(calls.begin(), calls.end(), call) != calls.end();
}

namespace {

HangInjection parse_hang(const nlohmann::json& j) {
  HangInjection h;
  h.calls = j.value("calls", h.calls);
  if (j.contains("after_calls")) h.after_calls = j.at("after_calls").get<unsigned>();
  if (j.contains("after_s")) h.after_s = j.at("after_s").get<double>();
  h.controls = j.value("controls", h.controls);
  if (h.after_calls && *h.after_calls == 0)
    throw std::runtime_error("fake NVML: hang.after_calls counts from 1");
  return h;
}

ErrorInjection parse_error_injection(const nlohmann::json& j) {
  ErrorInjection e;
  e.rate = j.value("rate", e.rate);
  e.codes = j.value("codes", e.codes);
  e.seed = j.value("seed", e.seed);
  e.after_s = j.value("after_s", e.after_s);
  if (j.contains("until_s")) e.until_s = j.at("until_s").get<double>();
  e.calls = j.value("calls", e.calls);
  e.controls = j.value("controls", e.controls);
  if (!(e.rate >= 0 && e.rate <= 1)) throw std::runtime_error("fake NVML: errors.rate must be in [0, 1]");
  if (e.codes.empty()) throw std::runtime_error("fake NVML: errors.codes must name at least one code");
  return e;
}

std::map<std::string, double> parse_call_costs(const nlohmann::json& j) {
  std::map<std::string, double> costs = j.value("call_cost_us", std::map<std::string, double>{});
  for (const auto& [call, us] : costs) {
    if (!(us >= 0)) throw std::runtime_error("fake NVML: call_cost_us of " + call + " must be >= 0");
  }
  return costs;
}

FakeGpuConfig parse_gpu(const nlohmann::json& j, std::size_t index) {
  FakeGpuConfig gpu;
  gpu.name = j.value("name", gpu.name);
  gpu.uuid = j.value("uuid", "GPU-fake-" + std::to_string(index));
  char bus_id[32];
  std::snprintf(bus_id, sizeof(bus_id), "00000000:%02zX:00.0", 0x19 + index);
  gpu.pci_bus_id = j.value("pci_bus_id", std::string(bus_id));
  if (j.contains("power_limit_w")) {
    const auto& limits = j.at("power_limit_w");
    gpu.min_limit_w = limits.value("min", gpu.min_limit_w);
    gpu.max_limit_w = limits.value("max", gpu.max_limit_w);
    gpu.default_limit_w = limits.value("default", gpu.max_limit_w);
    gpu.initial_limit_w = limits.value("initial", gpu.default_limit_w);
  }
  gpu.mem_clocks_mhz = j.value("mem_clocks_mhz", gpu.mem_clocks_mhz);
  gpu.sm_clocks_mhz = j.value("sm_clocks_mhz", gpu.sm_clocks_mhz);
  if (j.contains("profile")) {
    std::vector<PowerSegment> segments;
    for (const auto& s : j.at("profile"))
      segments.push_back({s.at("duration_s").get<double>(), s.at("watts").get<double>()});
    gpu.profile = PowerProfile(std::move(segments));
  }
  gpu.unsupported = j.value("unsupported", gpu.unsupported);
  if (j.contains("lost_after_s")) gpu.lost_after_s = j.at("lost_after_s").get<double>();
  if (j.contains("set_power_limit_error"))
    gpu.set_power_limit_error = j.at("set_power_limit_error").get<std::string>();
  if (j.contains("lost_while_file_exists"))
    gpu.lost_while_file_exists = j.at("lost_while_file_exists").get<std::string>();
  if (j.contains("errors")) gpu.errors = parse_error_injection(j.at("errors"));
  if (j.contains("hang")) gpu.hang = parse_hang(j.at("hang"));
  gpu.memory_used_mib = j.value("memory_used_mib", gpu.memory_used_mib);
  if (j.contains("compute_pids_file")) gpu.compute_pids_file = j.at("compute_pids_file").get<std::string>();
  gpu.memory_total_mib = j.value("memory_total_mib", gpu.memory_total_mib);
  gpu.pcie_tx_kbps = j.value("pcie_tx_kbps", gpu.pcie_tx_kbps);
  gpu.pcie_rx_kbps = j.value("pcie_rx_kbps", gpu.pcie_rx_kbps);
  gpu.counter_period_s = j.value("counter_period_ms", gpu.counter_period_s * 1e3) * 1e-3;
  gpu.counter_phase_s = j.value("counter_phase_ms", gpu.counter_phase_s * 1e3) * 1e-3;
  if (!(gpu.counter_period_s > 0) || gpu.counter_phase_s < 0 || gpu.counter_phase_s >= gpu.counter_period_s)
    throw std::runtime_error("fake NVML: counter_period_ms must be > 0 and counter_phase_ms in [0, period)");
  gpu.call_cost_us = parse_call_costs(j);
  return gpu;
}

}  // namespace

FakeConfig load_fake_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("fake NVML: cannot read config " + path);
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error("fake NVML: config " + path + " is not valid JSON: " + e.what());
  }
  FakeConfig config;
  config.driver_version = j.value("driver_version", config.driver_version);
  config.state_file = j.value("state_file", path + ".state");
  config.energy_read_delay_ms = j.value("energy_read_delay_ms", 0.0);
  config.call_cost_us = parse_call_costs(j);
  if (j.contains("init_error")) config.init_error = j.at("init_error").get<std::string>();
  if (j.contains("controls_error")) config.controls_error = j.at("controls_error").get<std::string>();
  if (j.contains("gpus")) {
    for (std::size_t i = 0; i < j.at("gpus").size(); ++i)
      config.gpus.push_back(parse_gpu(j.at("gpus")[i], i));
  }
  return config;
}

std::string fake_config_path_from_env() {
  const char* path = std::getenv("WATTWISE_FAKE_NVML_CONFIG");
  std::string text = path != nullptr ? path : "";
  // "%n" is the SLURM node this process runs on (as in slurm.conf), so that the nodes of a localhost test
  // cluster, started by one srun with one environment, each see their own GPUs.
  const char* node = std::getenv("SLURMD_NODENAME");
  for (auto at = text.find("%n"); at != std::string::npos && node != nullptr; at = text.find("%n", at))
    text.replace(at, 2, node);
  return text;
}

}  // namespace wattwise::fake_nvml
