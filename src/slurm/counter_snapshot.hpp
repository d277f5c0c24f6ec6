#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu.hpp"

// The GPUs' energy counters read once, for SLURM's prolog and epilog (tools/slurm/): the prolog keeps a
// snapshot per job, the epilog subtracts it from its own. Every job's GPU energy on every node, whether or
// not the job ran under `wattwise measure`. Read only: nothing is changed on a GPU.
namespace wattwise::slurm {

struct CounterReading {
  unsigned index = 0;
  std::string uuid;
  std::optional<std::uint64_t> energy_mj;  // absent: the GPU has no counter, or the read failed
};

struct CounterSnapshot {
  double time_unix_s = 0;  // wall clock: the prolog and the epilog are different processes
  std::vector<CounterReading> gpus;
};

// Reads the counter of each GPU at `positions`; a failed read is an absent reading, never a stop.
CounterSnapshot read_counters(hw::GpuSystem& system, const std::vector<std::size_t>& positions,
                              double time_unix_s);

nlohmann::json to_json(const CounterSnapshot& snapshot);
// Throws data_error naming `source` when it is not a snapshot.
CounterSnapshot counter_snapshot_from_json(const nlohmann::json& j, const std::string& source);

// The energy each GPU used between two snapshots, matched by UUID: `energy_j` per GPU, null where either
// reading is absent or the counter went backwards (the driver was reloaded); the sum, null if any is.
nlohmann::json energy_between(const CounterSnapshot& before, const CounterSnapshot& after);

}  // namespace wattwise::slurm
