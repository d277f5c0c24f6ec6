#include "experiment/cooldown.hpp"

#include <algorithm>
#include <deque>
#include <utility>

namespace wattwise::experiment {
namespace {

std::optional<double> power_now_w(hw::GpuReadings& gpu) {
  if (auto p = gpu.power_instant_w()) return p;
  return gpu.power_average_w();
}

// Temperatures of one GPU over the last window, to tell "still cooling" from "settled".
struct TemperatureHistory {
  std::deque<std::pair<Nanos, unsigned>> readings;

  void add(Nanos t, unsigned temp_c, Nanos window) {
    readings.emplace_back(t, temp_c);
    while (readings.size() > 1 && readings.front().first < t - window) readings.pop_front();
  }
  // Settled once the readings span the whole window and moved less than `change_c` over it.
  bool settled(Nanos now, Nanos window, double change_c) const {
    if (readings.empty() || now - readings.front().first < window) return false;
    auto [lo, hi] = std::minmax_element(readings.begin(), readings.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
    return static_cast<double>(hi->second) - static_cast<double>(lo->second) < change_c;
  }
};

}  // namespace

IdleBaseline read_idle_baseline(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices) {
  IdleBaseline idle;
  for (std::size_t index : gpu_indices) idle.power_w.push_back(power_now_w(system.gpu(index)));
  return idle;
}

CooldownResult cool_down(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                         const IdleBaseline& idle, Clock& clock, const CooldownOptions& options,
                         const std::function<bool()>& stop_requested) {
  const Nanos start = clock.now();
  std::vector<TemperatureHistory> temperatures(gpu_indices.size());
  for (Nanos now = start;; now = clock.now()) {
    bool all_settled = true;
    for (std::size_t k = 0; k < gpu_indices.size(); ++k) {
      hw::GpuReadings& gpu = system.gpu(gpu_indices[k]);
      const auto power = power_now_w(gpu);
      const auto idle_w = k < idle.power_w.size() ? idle.power_w[k] : std::nullopt;
      if (power && idle_w && *power > *idle_w * (1.0 + options.power_tolerance)) all_settled = false;
      if (auto temp = gpu.telemetry().temp_c) {
        temperatures[k].add(now, *temp, options.temperature_window);
        if (!temperatures[k].settled(now, options.temperature_window, options.temperature_change_c))
          all_settled = false;
      }
    }
    if (all_settled) return {now - start, true};
    if (now - start >= options.max_wait || (stop_requested && stop_requested())) return {now - start, false};
    clock.sleep_until(std::min(now + options.poll_period, start + options.max_wait));
  }
}

}  // namespace wattwise::experiment
