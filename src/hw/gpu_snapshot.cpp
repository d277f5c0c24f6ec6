#include "hw/gpu_snapshot.hpp"

#include "core/error.hpp"

namespace wattwise::hw {

namespace {

// A reading that fails (a lost GPU, a driver error) is absent, never the end of `info`.
template <typename Read>
auto or_absent(Read&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const Error&) {
    return {};
  }
}

std::optional<std::string> unreadable(GpuReadings& gpu) {
  try {
    (void)gpu.capabilities();
    (void)gpu.power_limits();
    (void)gpu.supported_mem_clocks_mhz();
    return std::nullopt;
  } catch (const Error& e) {
    return std::string(e.what());
  }
}

}  // namespace

LiveReading read_live(GpuReadings& gpu) {
  LiveReading r;
  r.power_w = or_absent([&] { return gpu.power_instant_w(); });
  if (!r.power_w) r.power_w = or_absent([&] { return gpu.power_average_w(); });
  if (const auto mj = or_absent([&] { return gpu.energy_mj(); })) r.energy_j = static_cast<double>(*mj) / 1e3;
  r.telemetry = or_absent([&] { return gpu.telemetry(); });
  return r;
}

SystemSnapshot read_snapshot(GpuSystem& system) {
  SystemSnapshot snapshot{system.backend(), system.driver_version(), {}};
  for (std::size_t i = 0; i < system.count(); ++i) {
    GpuReadings& gpu = system.gpu(i);
    GpuSnapshot g;
    g.identity = gpu.identity();
    g.unreadable = unreadable(gpu);
    g.now = read_live(gpu);
    g.power_limits = or_absent([&] { return gpu.power_limits(); });
    if (!g.unreadable) {
      g.capabilities = gpu.capabilities();
      g.mem_clocks_mhz = gpu.supported_mem_clocks_mhz();
      for (unsigned m : g.mem_clocks_mhz) g.sm_clocks_mhz[m] = gpu.supported_sm_clocks_mhz(m);
    }
    snapshot.gpus.push_back(std::move(g));
  }
  return snapshot;
}

}  // namespace wattwise::hw
