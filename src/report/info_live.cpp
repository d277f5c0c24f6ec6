#include "report/info_live.hpp"

#include <fmt/format.h>

#include "report/table.hpp"
#include "report/units.hpp"

namespace wattwise::report {

namespace {

template <typename T>
std::string text_or_na(const std::optional<T>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "n/a";
}

template <typename T>
std::string csv_field(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "";
}

// A CSV field that may hold a comma or a quote (a GPU name): quoted, quotes doubled (RFC 4180).
std::string csv_text(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string live_table(const hw::SystemSnapshot& system) {
  Table table({"GPU", "power", "energy since driver load", "temp", "SM clock", "mem clock", "util GPU / mem",
               "pstate", "memory used"});
  for (const auto& gpu : system.gpus) {
    const hw::LiveReading& r = gpu.now;
    const hw::Telemetry& t = r.telemetry;
    const std::string util =
        t.util_gpu_pct || t.util_mem_pct
            ? fmt::format("{} / {}", text_or_na(t.util_gpu_pct, "{}%"), text_or_na(t.util_mem_pct, "{}%"))
            : "n/a";
    table.add_row({std::to_string(gpu.identity.index), format_power_w(r.power_w), format_energy_j(r.energy_j),
                   text_or_na(t.temp_c, "{} °C"), text_or_na(t.sm_clock_mhz, "{} MHz"),
                   text_or_na(t.mem_clock_mhz, "{} MHz"), util, text_or_na(t.pstate, "P{}"),
                   text_or_na(t.mem_used_mib, "{:.0f} MiB")});
  }
  return table.render();
}

nlohmann::json live_json(const hw::LiveReading& r) {
  const auto value = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  const hw::Telemetry& t = r.telemetry;
  return {{"power_w", value(r.power_w)},
          {"energy_j", value(r.energy_j)},
          {"temp_c", value(t.temp_c)},
          {"sm_clock_mhz", value(t.sm_clock_mhz)},
          {"mem_clock_mhz", value(t.mem_clock_mhz)},
          {"util_gpu_pct", value(t.util_gpu_pct)},
          {"util_mem_pct", value(t.util_mem_pct)},
          {"pstate", value(t.pstate)},
          {"mem_used_mib", value(t.mem_used_mib)}};
}

std::string info_csv(const hw::SystemSnapshot& system) {
  std::string out =
      "index,uuid,name,pci_bus_id,power_w,energy_j,temp_c,sm_clock_mhz,mem_clock_mhz,util_gpu_pct,"
      "util_mem_pct,pstate,mem_used_mib,power_limit_w,power_limit_min_w,power_limit_default_w,"
      "power_limit_max_w\n";
  for (const auto& gpu : system.gpus) {
    const auto& id = gpu.identity;
    const hw::LiveReading& r = gpu.now;
    const hw::Telemetry& t = r.telemetry;
    const auto& limits = gpu.power_limits;
    const auto limit = [&](double hw::PowerLimits::*field) {
      return limits ? fmt::format("{}", (*limits).*field) : std::string();
    };
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", id.index, csv_text(id.uuid),
                       csv_text(id.name), csv_text(id.pci_bus_id), csv_field(r.power_w),
                       csv_field(r.energy_j), csv_field(t.temp_c), csv_field(t.sm_clock_mhz),
                       csv_field(t.mem_clock_mhz), csv_field(t.util_gpu_pct), csv_field(t.util_mem_pct),
                       csv_field(t.pstate), csv_field(t.mem_used_mib), limit(&hw::PowerLimits::current_w),
                       limit(&hw::PowerLimits::min_w), limit(&hw::PowerLimits::default_w),
                       limit(&hw::PowerLimits::max_w));
  }
  return out;
}

}  // namespace wattwise::report
