#include "report/info_report.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/version.hpp"  // generated
#include "report/info_live.hpp"
#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

struct NamedFlag {
  const char* name;
  bool hw::Capabilities::*flag;
};

const NamedFlag kReadings[] = {
    {"energy_counter", &hw::Capabilities::energy_counter},
    {"power_instant", &hw::Capabilities::power_instant},
    {"power_average", &hw::Capabilities::power_average},
    {"power_samples", &hw::Capabilities::power_samples},
    {"clocks", &hw::Capabilities::clocks},
    {"utilization", &hw::Capabilities::utilization},
    {"temperature", &hw::Capabilities::temperature},
    {"pstate", &hw::Capabilities::pstate},
    {"throttle_reasons", &hw::Capabilities::throttle_reasons},
    {"pcie_throughput", &hw::Capabilities::pcie_throughput},
    {"memory_used", &hw::Capabilities::memory_used},
};

const NamedFlag kControls[] = {
    {"power_limit_read", &hw::Capabilities::power_limit_read},
    {"power_limit_set", &hw::Capabilities::power_limit_set},
    {"sm_clock_lock", &hw::Capabilities::sm_clock_lock},
    {"mem_clock_lock", &hw::Capabilities::mem_clock_lock},
};

std::string flags_text(const hw::Capabilities& caps, std::span<const NamedFlag> flags, bool present) {
  std::string out;
  for (const auto& f : flags)
    if ((caps.*f.flag) == present) out += fmt::format("{}{}", out.empty() ? "" : ", ", f.name);
  return out.empty() ? "none" : out;
}

std::string clocks_text(const std::vector<unsigned>& clocks) {
  if (clocks.empty()) return "n/a";
  const auto [lo, hi] = std::minmax_element(clocks.begin(), clocks.end());
  return fmt::format("{} values, {}..{} MHz", clocks.size(), *lo, *hi);
}

// "yes", "no" or "unknown until tried", with the reason; nullopt in `allowed` is the unknown.
struct SettingPermission {
  std::optional<bool> allowed;
  std::string text;
};

SettingPermission setting_permission(const hw::Capabilities& caps, const std::optional<SetProbe>& probe) {
  if (!caps.power_limit_set || !caps.sm_clock_lock)
    return {false, caps.set_permission_note.empty() ? "no" : "no (" + caps.set_permission_note + ")"};
  if (!probe)
    return {std::nullopt,
            "unknown until tried: the driver has the calls and this is root, but a container or an "
            "administrator setting can still refuse them (`wattwise info --probe` asks the driver)"};
  if (!probe->allowed) return {std::nullopt, "unknown until tried: " + probe->note};
  if (*probe->allowed) return {true, "yes (the driver accepted the current power limit)"};
  return {false, "no (the driver refused to set the current power limit: " + probe->note + ")"};
}

std::optional<SetProbe> probe_of(const std::vector<std::optional<SetProbe>>& probes, std::size_t i) {
  return i < probes.size() ? probes[i] : std::nullopt;
}

}  // namespace

std::string info_text(const hw::SystemSnapshot& system, const std::vector<std::optional<SetProbe>>& probes) {
  std::string out = fmt::format("wattwise {}  backend {}  driver {}  GPUs {}\n\n", kVersion, system.backend,
                                system.driver_version, system.gpus.size());
  Table table({"GPU", "name", "power limit min / default / current / max", "enforced", "memory clocks"});
  table.set_align(1, Table::Align::kLeft);
  for (const auto& gpu : system.gpus) {
    if (gpu.unreadable) {
      table.add_row(
          {std::to_string(gpu.identity.index), "unreadable (the reason is on stderr)", "n/a", "n/a", "n/a"});
      continue;
    }
    const auto& limits = gpu.power_limits;
    const auto& mem = gpu.mem_clocks_mhz;
    std::string mem_text = mem.empty() ? "n/a" : "";
    for (unsigned m : mem) mem_text += fmt::format("{}{}", mem_text.empty() ? "" : ", ", m);
    table.add_row({std::to_string(gpu.identity.index), gpu.identity.name,
                   limits ? fmt::format("{:.0f} / {:.0f} / {:.0f} / {:.0f} W", limits->min_w,
                                        limits->default_w, limits->current_w, limits->max_w)
                          : "n/a",
                   limits ? format_power_w(limits->enforced_w) : "n/a",
                   mem.empty() ? "n/a" : mem_text + " MHz"});
  }
  out += table.render();
  out += "\nNow:\n" + live_table(system);
  for (std::size_t i = 0; i < system.gpus.size(); ++i) {
    const auto& gpu = system.gpus[i];
    if (gpu.unreadable) continue;  // said in the table above
    const auto& id = gpu.identity;
    const auto& caps = gpu.capabilities;
    out += fmt::format("\nGPU {}  {}  PCI {}\n", id.index, id.uuid, id.pci_bus_id);
    for (unsigned m : gpu.mem_clocks_mhz)
      out += fmt::format("  SM clocks at {} MHz memory: {}\n", m, clocks_text(gpu.sm_clocks_mhz.at(m)));
    out += fmt::format("  readings:     {}\n", flags_text(caps, kReadings, true));
    const auto missing = flags_text(caps, kReadings, false);
    if (missing != "none") out += fmt::format("  not available: {}\n", missing);
    out += fmt::format("  controls:     {}\n", flags_text(caps, kControls, true));
    out += fmt::format("  may change settings: {}\n", setting_permission(caps, probe_of(probes, i)).text);
  }
  return out;
}

nlohmann::json info_json(const hw::SystemSnapshot& system,
                         const std::vector<std::optional<SetProbe>>& probes) {
  using nlohmann::json;
  json j{{"tool", "wattwise"},
         {"version", kVersion},
         {"backend", system.backend},
         {"driver_version", system.driver_version},
         {"gpus", json::array()}};
  for (std::size_t i = 0; i < system.gpus.size(); ++i) {
    const auto& gpu = system.gpus[i];
    if (gpu.unreadable) {
      j["gpus"].push_back(json{{"index", gpu.identity.index}, {"error", *gpu.unreadable}});
      continue;
    }
    const auto& id = gpu.identity;
    const auto& caps = gpu.capabilities;
    json g{{"index", id.index}, {"uuid", id.uuid}, {"name", id.name}, {"pci_bus_id", id.pci_bus_id}};
    if (const auto& limits = gpu.power_limits) {
      g["power_limit_w"] = {{"min", limits->min_w},
                            {"max", limits->max_w},
                            {"default", limits->default_w},
                            {"current", limits->current_w},
                            {"enforced", limits->enforced_w}};
    } else {
      g["power_limit_w"] = nullptr;
    }
    json clocks = json::object();
    for (const auto& [m, sm] : gpu.sm_clocks_mhz) clocks[std::to_string(m)] = sm;
    g["supported_sm_clocks_mhz_by_mem_clock"] = clocks;
    json readings = json::object();
    for (const auto& f : kReadings) readings[f.name] = caps.*f.flag;
    json controls = json::object();
    for (const auto& f : kControls) controls[f.name] = caps.*f.flag;
    g["readings"] = readings;
    g["now"] = live_json(gpu.now);
    g["controls"] = controls;
    // true, false, or null: unknown until tried (see info_text).
    const auto permission = setting_permission(caps, probe_of(probes, i));
    g["may_change_settings"] = permission.allowed ? json(*permission.allowed) : json(nullptr);
    g["permission_note"] = permission.allowed == true ? std::string() : permission.text;
    j["gpus"].push_back(g);
  }
  return j;
}

}  // namespace wattwise::report
