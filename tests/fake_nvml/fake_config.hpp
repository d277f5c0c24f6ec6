#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

// The fake driver's world, read from the JSON file named by WATTWISE_FAKE_NVML_CONFIG. Shared by the fake
// libnvidia-ml.so.1, its control tool and the tests, so a test can compute exactly what the fake will say.
namespace wattwise::fake_nvml {

// One piece of a power profile: `watts` for `duration_s` seconds.
struct PowerSegment {
  double duration_s = 1;
  double watts = 100;
};

// Piecewise-constant power that repeats forever, its phase anchored at CLOCK_MONOTONIC time 0.
class PowerProfile {
 public:
  explicit PowerProfile(std::vector<PowerSegment> segments);
  double period_s() const { return period_s_; }
  const std::vector<PowerSegment>& segments() const { return segments_; }
  // Power at monotonic time t, before the power limit is applied.
  double power_w(double t_s) const;
  // Exact integral of min(profile, cap_w) over [t0_s, t1_s], in joules.
  double energy_j(double t0_s, double t1_s, double cap_w) const;

 private:
  double integral_from_zero_j(double t_s, double cap_w) const;
  std::vector<PowerSegment> segments_;
  double period_s_ = 0;
};

// Random NVML errors on one GPU (fault injection): from `after_s` (after nvmlInit) until `until_s`, each
// matching device call fails with probability `rate`, with a code drawn from `codes`. Seeded, so a failing
// trial can be replayed; each process draws its own sequence from the same seed. Config:
//   "errors": {"rate": 0.05, "codes": ["UNKNOWN", "TIMEOUT"], "seed": 7, "after_s": 0.3,
//              "until_s": 2.0, "calls": ["nvmlDeviceGetPowerUsage"], "controls": false}
// `calls` absent: every device call; `controls` false (the default): set/reset calls are spared, so a
// restore is not made to fail by the same fault (set_power_limit_error covers failing controls).
struct ErrorInjection {
  double rate = 0;
  std::vector<std::string> codes = {"UNKNOWN"};
  unsigned seed = 1;
  double after_s = 0;
  std::optional<double> until_s;
  std::vector<std::string> calls;
  bool controls = false;

  // Whether this injection may hit `call` at `since_init_s` seconds after nvmlInit (the draw is separate).
  bool applies_to(const std::string& call, double since_init_s) const;
};

// A call that never returns, as a GPU fallen off the bus can leave the driver: each matching call on this
// GPU blocks its thread for good (CPU idle, signals blocked) from the `after_calls`-th matching call of
// the process on (counted from 1), or from `after_s` seconds after nvmlInit; both absent: from the first.
// Config: "hang": {"calls": ["nvmlDeviceGetTotalEnergyConsumption"], "after_calls": 20, "after_s": 1.0,
//                  "controls": false}
// `calls` absent: every device call; `controls` false (the default): set/reset calls are spared.
struct HangInjection {
  std::vector<std::string> calls;
  std::optional<unsigned> after_calls;
  std::optional<double> after_s;
  bool controls = false;

  // Whether `call` can hang at all (the count of matching calls and the time decide when).
  bool matches(const std::string& call) const;
};

struct FakeGpuConfig {
  std::string name = "NVIDIA H100 80GB HBM3";
  std::string uuid;
  std::string pci_bus_id;
  double min_limit_w = 200;
  double max_limit_w = 700;
  double default_limit_w = 700;
  double initial_limit_w = 700;
  std::vector<unsigned> mem_clocks_mhz = {2619, 1593};
  std::vector<unsigned> sm_clocks_mhz = {1980, 1755, 1500, 1200, 900, 600, 345};
  PowerProfile profile{{{1.0, 100.0}}};
  std::vector<std::string>
      unsupported;  // NVML function names (or "NVML_FI_DEV_POWER_INSTANT") that say NOT_SUPPORTED
  std::optional<double> lost_after_s;  // every call fails with GPU_IS_LOST this long after nvmlInit
  std::optional<std::string> set_power_limit_error;  // e.g. "UNKNOWN": this GPU's set-limit call fails
  std::optional<ErrorInjection> errors;              // random errors at random moments
  std::optional<HangInjection> hang;                 // calls that never return
  // Every call fails with GPU_IS_LOST while this file exists: a test loses the GPU at a moment it picks,
  // for every process at once (wattwise, its watchdog, a later `wattwise restore`), unlike lost_after_s.
  std::optional<std::string> lost_while_file_exists;
  // The pids with a compute context on this GPU: read from this file (whitespace separated) at every
  // nvmlDeviceGetComputeRunningProcesses_v3 call, so a test job can write its own pid into it; no file: none.
  std::optional<std::string> compute_pids_file;
  double memory_used_mib = 1024;
  double memory_total_mib = 81559;
  unsigned pcie_tx_kbps = 1000;
  unsigned pcie_rx_kbps = 2000;
  // The energy counter (and the instantaneous power field, which changes at the same instants) is posted
  // at counter_phase_s + n * counter_period_s of CLOCK_MONOTONIC time, like the H100's ~100 ms postings.
  // Config: "counter_period_ms": 100, "counter_phase_ms": 0 (phase in [0, period)).
  double counter_period_s = 0.1;
  double counter_phase_s = 0;
  // CPU each call burns on the calling thread, by NVML function name, in microseconds; overrides the
  // global "call_cost_us" name by name (see FakeConfig).
  std::map<std::string, double> call_cost_us;

  bool is_unsupported(const std::string& call) const;
  // The cost of `call` on this GPU: its own entry, else the global one, else 0.
  double cost_us(const std::string& call, const std::map<std::string, double>& global) const;
};

struct FakeConfig {
  std::string driver_version = "580.159.04";
  std::string state_file;           // settings that persist across processes
  double energy_read_delay_ms = 0;  // sleeps (no CPU) this long in each energy read
  // CPU burnt per call, by NVML function name, in microseconds: the call spins on its thread's CPU clock,
  // as the real driver spins (an H100's energy read costs ~3.97 ms of CPU, shared/reference/nvml-h100.md).
  // e.g. "call_cost_us": {"nvmlDeviceGetTotalEnergyConsumption": 3970, "nvmlDeviceGetFieldValues": 6}.
  // Absent: 0, so tests stay fast. A GPU's own "call_cost_us" overrides it name by name.
  std::map<std::string, double> call_cost_us;
  std::optional<std::string> init_error;      // "DRIVER_NOT_LOADED" or "LIB_RM_VERSION_MISMATCH"
  std::optional<std::string> controls_error;  // e.g. "NO_PERMISSION": every set/reset call fails so
  std::vector<FakeGpuConfig> gpus;
};

// Throws std::runtime_error naming the file and the problem.
FakeConfig load_fake_config(const std::string& path);

// The path in WATTWISE_FAKE_NVML_CONFIG, "%n" replaced by SLURMD_NODENAME where set; or empty.
std::string fake_config_path_from_env();

}  // namespace wattwise::fake_nvml
