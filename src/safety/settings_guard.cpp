// HAZARD ZONE (safety). A mistake here leaves a GPU capped (a setting not journaled, not restored, or changed
// under --read-only). Before a change here lands, run test_safety, test_safety_unit, test_experiment and
// `ctest -L faults` (Release build; docs/architecture.md "Hazard zones").

#include "safety/settings_guard.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "core/error.hpp"
#include "hw/permission.hpp"

namespace wattwise::safety {
namespace {

std::string describe(const hw::GpuReadings& gpu) {
  const auto& id = gpu.identity();
  if (id.uuid.empty()) return fmt::format("GPU {} ({})", id.index, id.name);  // unreadable: no identity
  return fmt::format("GPU {} ({}, {})", id.index, id.name, id.uuid);
}

Error no_permission(const hw::GpuReadings& gpu, const hw::Capabilities& caps, const char* what) {
  return environment_error(
      fmt::format("cannot change the {} of {}: {}", what, describe(gpu),
                  caps.set_permission_note.empty()
                      ? "the driver does not allow it; " + hw::permission_advice(geteuid() == 0)
                      : caps.set_permission_note));
}

// The driver's reason inside a control's message "GPU 1: nvmlDeviceSetPowerManagementLimit failed:
// Insufficient Permissions: <advice>": the part after "failed: " up to the advice.
std::string driver_reason(const std::string& failure) {
  const std::string marker = "failed: ";
  const auto start = failure.find(marker);
  if (start == std::string::npos) return failure;
  const auto reason_start = start + marker.size();
  const auto end = failure.find(": ", reason_start);
  return failure.substr(0, end == std::string::npos ? std::string::npos : end);
}

}  // namespace

Error refused_change(const hw::GpuReadings& gpu, const std::string& what, const std::string& failure,
                     bool process_is_root) {
  // Only a refusal is answered with permission advice; another failure (a lost GPU) keeps its own advice.
  const bool refused =
      failure.find("Permission") != std::string::npos || failure.find("permission") != std::string::npos;
  if (!refused)
    return environment_error(fmt::format("cannot change the {} of {}: {}", what, describe(gpu), failure));
  return environment_error(fmt::format("cannot change the {} of {}: {}; {}", what, describe(gpu),
                                       driver_reason(failure), hw::permission_advice(process_is_root)));
}

void validate_hardware_settings(hw::GpuSystem& system, const std::vector<std::size_t>& gpu_indices,
                                const std::vector<plan::HardwareSettings>& settings, bool check_permission) {
  bool any_limit = false, any_sm = false, any_mem = false;
  for (const auto& s : settings) {
    any_limit = any_limit || s.power_limit_w.has_value();
    any_sm = any_sm || s.sm_clock_mhz.has_value();
    any_mem = any_mem || s.mem_clock_mhz.has_value();
  }
  for (std::size_t index : gpu_indices) {
    hw::GpuReadings& gpu = system.gpu(index);
    const hw::Capabilities caps = gpu.capabilities();
    if (any_limit) {
      if (check_permission && !caps.power_limit_set) throw no_permission(gpu, caps, "power limit");
      const auto limits = gpu.power_limits();
      if (!limits) {
        throw environment_error(
            fmt::format("cannot read the power limits of {}, so its limit could not be restored: "
                        "leave out --power-limit for this GPU",
                        describe(gpu)));
      }
      for (const auto& s : settings) {
        if (s.power_limit_w && (*s.power_limit_w < limits->min_w || *s.power_limit_w > limits->max_w)) {
          throw usage_error(fmt::format("power limit {} W is outside the valid range {}-{} W of {}",
                                        *s.power_limit_w, limits->min_w, limits->max_w, describe(gpu)));
        }
      }
    }
    if (check_permission && any_sm && !caps.sm_clock_lock) throw no_permission(gpu, caps, "SM clocks");
    if (check_permission && any_mem && !caps.mem_clock_lock) throw no_permission(gpu, caps, "memory clocks");
  }
}

SettingsGuard::SettingsGuard(hw::ControllableGpuSystem& system, std::vector<std::size_t> gpu_indices,
                             std::filesystem::path journal_path)
    : system_(system), gpu_indices_(std::move(gpu_indices)), journal_path_(std::move(journal_path)) {}

SettingsGuard::~SettingsGuard() {
  if (!captured_) return;
  try {
    RestoreReport report = restore();
    if (!report.all_ok())
      std::fprintf(stderr, "wattwise: restoring GPU settings failed:\n%s", report.summary().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wattwise: restoring GPU settings failed: %s (journal %s kept)\n", e.what(),
                 journal_path_.c_str());
  }
}

void SettingsGuard::write() {
  write_journal(journal_path_, journal_);
}

void SettingsGuard::capture() {
  if (captured_) return;
  journal_ = new_journal();
  for (std::size_t index : gpu_indices_) {
    hw::GpuReadings& gpu = system_.gpu(index);
    JournalEntry entry;
    entry.uuid = gpu.identity().uuid;
    entry.index = gpu.identity().index;
    entry.name = gpu.identity().name;
    // The limit that is set now (which may itself be a site's cap), never the vendor default.
    if (auto limits = gpu.power_limits()) entry.power_limit_w = limits->current_w;
    journal_.gpus.push_back(entry);
  }
  write();  // throws before anything was changed
  captured_ = true;
}

void SettingsGuard::apply(const plan::HardwareSettings& settings) {
  capture();
  bool journal_changed = false;
  for (auto& entry : journal_.gpus) {
    if (settings.power_limit_w && !entry.power_limit_w) {
      throw environment_error(
          fmt::format("the power limit of GPU {} ({}) could not be read before the first change, "
                      "so it could not be restored: leave out --power-limit",
                      entry.index, entry.uuid));
    }
    if (settings.sm_clock_mhz && !entry.reset_sm_clocks) entry.reset_sm_clocks = journal_changed = true;
    if (settings.mem_clock_mhz && !entry.reset_mem_clocks) entry.reset_mem_clocks = journal_changed = true;
  }
  if (journal_changed) write();  // the journal must know about the clocks before they are locked
  for (std::size_t index : gpu_indices_) {
    hw::Gpu& gpu = system_.gpu(index);
    if (settings.power_limit_w) gpu.set_power_limit_w(*settings.power_limit_w);
    if (settings.sm_clock_mhz) gpu.lock_sm_clocks_mhz(*settings.sm_clock_mhz, *settings.sm_clock_mhz);
    if (settings.mem_clock_mhz) gpu.lock_mem_clocks_mhz(*settings.mem_clock_mhz, *settings.mem_clock_mhz);
  }
}

RestoreReport SettingsGuard::restore(const std::set<std::string>& unanswering) {
  if (!captured_) return {};
  captured_ = false;  // one attempt: a failed restore keeps the journal for `wattwise restore`
  RestoreReport report = restore_gpus(system_, journal_, unanswering);
  settle_journal(journal_path_, journal_, report);
  return report;
}

}  // namespace wattwise::safety
