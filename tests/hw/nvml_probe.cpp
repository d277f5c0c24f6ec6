// nvml_probe: prints everything NvmlGpu reads from the GPUs of this host, changing nothing. It is how the
// hand-written ABI in hw/nvml_abi.hpp is checked against a real driver (the unit tests only see the fake).
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "hw/nvml_system.hpp"

using namespace wattwise;

namespace {

template <typename T>
void print_optional(const char* name, const std::optional<T>& value) {
  if (value) {
    std::printf("  %-18s %g\n", name, static_cast<double>(*value));
  } else {
    std::printf("  %-18s n/a\n", name);
  }
}

void probe(hw::Gpu& gpu) {
  const hw::GpuIdentity& id = gpu.identity();
  std::printf("GPU %u: %s %s %s\n", id.index, id.name.c_str(), id.uuid.c_str(), id.pci_bus_id.c_str());
  const hw::Capabilities caps = gpu.capabilities();
  std::printf("  caps: energy=%d instant=%d average=%d samples=%d limit_set=%d sm_lock=%d note='%s'\n",
              caps.energy_counter, caps.power_instant, caps.power_average, caps.power_samples,
              caps.power_limit_set, caps.sm_clock_lock, caps.set_permission_note.c_str());
  print_optional("energy_mj", gpu.energy_mj());
  print_optional("power_instant_w", gpu.power_instant_w());
  print_optional("power_average_w", gpu.power_average_w());
  const auto samples = gpu.power_samples_since(0);
  std::printf("  samples            %zu", samples.size());
  if (!samples.empty()) {
    std::printf(" from %llu to %llu us, last %g W",
                static_cast<unsigned long long>(samples.front().device_time_us),
                static_cast<unsigned long long>(samples.back().device_time_us), samples.back().power_w);
  }
  std::printf("\n");
  const hw::Telemetry t = gpu.telemetry();
  print_optional("sm_clock_mhz", t.sm_clock_mhz);
  print_optional("mem_clock_mhz", t.mem_clock_mhz);
  print_optional("util_gpu_pct", t.util_gpu_pct);
  print_optional("temp_c", t.temp_c);
  print_optional("pstate", t.pstate);
  print_optional("throttle_reasons", t.throttle_reasons);
  print_optional("pcie_tx_mbps", t.pcie_tx_mbps);
  print_optional("mem_used_mib", t.mem_used_mib);
  if (const auto limits = gpu.power_limits()) {
    std::printf("  limits W: min %g max %g default %g current %g enforced %g\n", limits->min_w, limits->max_w,
                limits->default_w, limits->current_w, limits->enforced_w);
  }
  const auto mem_clocks = gpu.supported_mem_clocks_mhz();
  std::printf("  mem clocks:");
  for (unsigned c : mem_clocks) std::printf(" %u", c);
  std::printf("\n");
  if (!mem_clocks.empty()) {
    const auto sm = gpu.supported_sm_clocks_mhz(mem_clocks.front());
    std::printf("  sm clocks at %u: %zu values", mem_clocks.front(), sm.size());
    if (!sm.empty()) std::printf(" %u .. %u", sm.back(), sm.front());
    std::printf("\n");
  }
}

}  // namespace

int main() {
  try {
    auto system = hw::make_gpu_system();
    std::printf("driver %s, %zu GPU(s)\n", system->driver_version().c_str(), system->count());
    for (std::size_t i = 0; i < system->count(); ++i) probe(system->gpu(i));
  } catch (const Error& e) {
    std::fprintf(stderr, "nvml_probe: %s\n", e.what());
    return e.exit_code();
  }
  return 0;
}
