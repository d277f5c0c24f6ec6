#include "sim/profiles.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;

std::vector<unsigned> clock_steps_mhz(double max_mhz, double min_mhz, double step_mhz) {
  std::vector<unsigned> clocks;
  for (double mhz = max_mhz; mhz >= min_mhz - 1e-9; mhz -= step_mhz) {
    clocks.push_back(static_cast<unsigned>(std::lround(mhz)));
  }
  return clocks;
}

const std::vector<SimGpuSpec>& gpu_specs() {
  static const std::vector<SimGpuSpec> specs = {
      // 187 SM clocks 1530..135 MHz (~7.5 MHz apart), HBM2 at 877 MHz, as a V100-SXM2 reports them.
      {"v100",
       "Tesla V100-SXM2-16GB (simulated)",
       150,
       300,
       300,
       40,
       0.05,
       50ms,
       1530,
       135,
       clock_steps_mhz(1530, 135, 7.5),
       {877},
       30,
       0.15,
       60,
       16160},
      {"rtx6000",
       "Quadro RTX 6000 (simulated)",
       100,
       260,
       260,
       20,
       0.05,
       50ms,
       1950,
       300,
       clock_steps_mhz(2100, 300, 15),
       {7001, 405},
       30,
       0.2,
       60,
       24220},
      // 110 SM clocks 1980..345 MHz at the 2619 MHz memory clock (shared/reference/nvml-h100.md).
      {"h100",
       "NVIDIA H100 80GB HBM3 (simulated)",
       200,
       700,
       700,
       77,
       0.13,
       50ms,
       1980,
       345,
       clock_steps_mhz(1980, 345, 15),
       {2619, 1593},
       28,
       0.08,
       60,
       81559},
  };
  return specs;
}

struct NamedWorkload {
  std::string gpu;
  WorkloadProfile workload;
};

// V100 constants: tools/fit_sim_profiles.py on shared/reference/v100_cnn_power_caps.csv (epochs of 100,000
// samples; samples_per_s = 100000 / default epoch time). H100 throughput and power: nvml-h100.md; its and the
// RTX 6000's power-frequency parameters are plausible guesses shaped like the V100 fits.
WorkloadProfile workload(std::string model, unsigned batch, double samples_per_s, double busy_w,
                         double static_w, double cap_tracking, double throughput_exponent,
                         double mem_used_mib) {
  return WorkloadProfile{
      std::move(model),    batch,        100000, samples_per_s, busy_w, static_w, cap_tracking, 3.0,
      throughput_exponent, mem_used_mib, 40,     nullptr};
}

const std::vector<NamedWorkload>& workloads() {
  static const std::vector<NamedWorkload> all = {
      {"v100", workload("alexnet", 128, 100000 / 39.7, 181.4, 99.0, 0.850, 0.390, 5200)},
      {"v100", workload("vgg19", 128, 100000 / 492.5, 264.9, 105.0, 0.930, 0.570, 15100)},
      {"v100", workload("inception3", 128, 100000 / 394.8, 265.8, 138.0, 0.925, 0.330, 14800)},
      {"v100", workload("inception4", 64, 100000 / 845.1, 273.1, 99.0, 0.935, 0.570, 15300)},
      {"v100", workload("resnet50", 128, 100000 / 266.4, 262.3, 108.0, 0.920, 0.510, 14900)},
      {"v100", workload("resnet152", 64, 100000 / 683.0, 273.7, 108.0, 0.945, 0.510, 15400)},
      {"rtx6000", workload("alexnet", 128, 2150, 205, 80, 0.90, 0.45, 6000)},
      {"rtx6000", workload("vgg19", 128, 175, 245, 85, 0.93, 0.55, 20000)},
      {"rtx6000", workload("resnet50", 128, 330, 240, 90, 0.93, 0.50, 18000)},
      {"h100", workload("alexnet", 256, 16475, 566, 190, 0.94, 0.45, 30000)},
      {"h100", workload("vgg19", 64, 1052, 630, 200, 0.94, 0.55, 40000)},
      {"h100", workload("resnet50", 128, 1819, 558, 190, 0.94, 0.50, 35000)},
  };
  return all;
}

}  // namespace

const SimGpuSpec& find_gpu_spec(std::string_view gpu) {
  std::string valid;
  for (const auto& spec : gpu_specs()) {
    if (spec.key == gpu) return spec;
    valid += (valid.empty() ? "" : ", ") + spec.key;
  }
  throw usage_error(fmt::format("unknown simulated GPU '{}': use one of {}", gpu, valid));
}

SimProfile find_profile(std::string_view gpu, std::string_view model) {
  const SimGpuSpec& spec = find_gpu_spec(gpu);
  std::string valid;
  for (const auto& named : workloads()) {
    if (named.gpu != gpu) continue;
    if (named.workload.model == model) return SimProfile{spec, named.workload};
    valid += (valid.empty() ? "" : ", ") + named.workload.model;
  }
  throw usage_error(fmt::format("no simulated model '{}' on {}: use one of {}", model, gpu, valid));
}

std::vector<std::string> profile_names() {
  std::vector<std::string> names;
  for (const auto& named : workloads()) names.push_back(named.gpu + ":" + named.workload.model);
  return names;
}

}  // namespace wattwise::sim
