#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "fake_config.hpp"

namespace wattwise::fake_nvml {

// Settings of one fake GPU that must outlive the process that made them (the real driver keeps a power
// limit after wattwise exits or is killed; the tests check what a watchdog restored).
struct FakeGpuSettings {
  unsigned power_limit_mw = 0;
  std::optional<std::pair<unsigned, unsigned>> sm_lock_mhz;
  std::optional<std::pair<unsigned, unsigned>> mem_lock_mhz;
  // The energy counter is anchored where the limit last changed, so it stays monotone across limits:
  // energy(t) = anchor_energy_j + integral of min(profile, limit) from anchor_time_s to t.
  double anchor_energy_j = 0;
  double anchor_time_s = 0;
};

using FakeState = std::map<std::string, FakeGpuSettings>;  // by GPU UUID

// The state file: read and written under flock on "<state_file>.lock", replaced atomically (temp + rename).
// A missing file or GPU means "as configured" (initial limit, no locks, counter from monotonic time 0).
FakeState read_fake_state(const FakeConfig& config);
// Reads, lets `change` edit, writes back; all under one exclusive lock.
void update_fake_state(const FakeConfig& config, const std::function<void(FakeState&)>& change);

}  // namespace wattwise::fake_nvml
