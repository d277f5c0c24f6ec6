#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "core/error.hpp"
#include "hw/gpu.hpp"

namespace wattwise::experiment::testing {

// An in-memory GPU for the experiment tests. Optionally its power limit lives in a file, so a second
// process (the watchdog) sees the limit a first process set. Calls are logged so tests can check order.
class FakeGpu final : public hw::Gpu {
 public:
  FakeGpu(unsigned index, std::string uuid, double current_limit_w, std::filesystem::path limit_file = {})
      : limit_file_(std::move(limit_file)) {
    identity_.index = index;
    identity_.uuid = std::move(uuid);
    identity_.name = "Fake H100";
    limits_ = {100, 700, 700, current_limit_w, current_limit_w};
    if (!limit_file_.empty() && !std::filesystem::exists(limit_file_)) store_limit(current_limit_w);
  }

  // Test knobs.
  hw::Capabilities caps{.power_limit_read = true,
                        .power_limit_set = true,
                        .sm_clock_lock = true,
                        .mem_clock_lock = true,
                        .set_permission_note = {}};
  bool fail_set_power_limit = false;
  bool fail_reset_sm_clocks = false;
  std::function<void()> before_set;  // runs at the start of every control call
  std::function<std::optional<double>()> power_w;  // instantaneous and averaged power; absent when empty
  std::function<hw::Telemetry()> telemetry_now;     // telemetry; empty when unset
  std::vector<std::string> calls;
  bool sm_locked = false;
  bool mem_locked = false;

  double limit_w() { return limit_file_.empty() ? limits_.current_w : load_limit(); }

  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override { return caps; }
  std::optional<std::uint64_t> energy_mj() override { return std::nullopt; }
  std::optional<double> power_instant_w() override { return power_w ? power_w() : std::nullopt; }
  std::optional<double> power_average_w() override { return power_instant_w(); }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t) override { return {}; }
  hw::Telemetry telemetry() override { return telemetry_now ? telemetry_now() : hw::Telemetry{}; }
  std::optional<hw::PowerLimits> power_limits() override {
    auto limits = limits_;
    limits.current_w = limits.enforced_w = limit_w();
    return limits;
  }
  std::vector<unsigned> supported_mem_clocks_mhz() override { return {2619}; }
  std::vector<unsigned> supported_sm_clocks_mhz(unsigned) override { return {1410, 1980}; }
  void set_power_limit_w(double watts) override {
    control("set_power_limit_w " + std::to_string(static_cast<int>(watts)));
    if (fail_set_power_limit) throw environment_error("fake: set power limit failed");
    if (limit_file_.empty()) {
      limits_.current_w = watts;
    } else {
      store_limit(watts);
    }
  }
  void lock_sm_clocks_mhz(unsigned, unsigned) override {
    control("lock_sm_clocks");
    sm_locked = true;
  }
  void reset_sm_clocks() override {
    control("reset_sm_clocks");
    if (fail_reset_sm_clocks) throw environment_error("fake: reset SM clocks failed");
    sm_locked = false;
  }
  void lock_mem_clocks_mhz(unsigned, unsigned) override {
    control("lock_mem_clocks");
    mem_locked = true;
  }
  void reset_mem_clocks() override {
    control("reset_mem_clocks");
    mem_locked = false;
  }

 private:
  void control(const std::string& name) {
    if (before_set) before_set();
    calls.push_back(name);
  }
  void store_limit(double watts) {
    // Write-then-rename so the reading process never sees a half-written number.
    auto temp = limit_file_.string() + ".tmp";
    std::ofstream(temp) << watts << "\n";
    std::filesystem::rename(temp, limit_file_);
  }
  double load_limit() {
    double watts = 0;
    std::ifstream(limit_file_) >> watts;
    return watts;
  }

  hw::GpuIdentity identity_;
  hw::PowerLimits limits_;
  std::filesystem::path limit_file_;
};

class FakeGpuSystem final : public hw::GpuSystem {
 public:
  FakeGpu& add(std::unique_ptr<FakeGpu> gpu) {
    gpus_.push_back(std::move(gpu));
    return *gpus_.back();
  }
  FakeGpu& fake(std::size_t index) { return *gpus_.at(index); }
  std::string driver_version() override { return "fake"; }
  std::string backend() const override { return "fake"; }
  std::size_t count() const override { return gpus_.size(); }
  hw::Gpu& gpu(std::size_t index) override { return *gpus_.at(index); }

 private:
  std::vector<std::unique_ptr<FakeGpu>> gpus_;
};

using wattwise::testing::TempDir;

}  // namespace wattwise::experiment::testing
