#include "cli/node_flags.hpp"

#include <fmt/format.h>

#include "cli/flag_values.hpp"
#include "core/error.hpp"
#include "hw/meter_command.hpp"

namespace wattwise::cli {

void add_node_flags(CLI::App& app, NodeFlags& flags) {
  app.add_option("--meter-cmd", flags.meter_cmd,
                 "read node power from this command, run once per node reading; it prints `<number> J` "
                 "(cumulative) or `<number> W` (docs/node-power.md)");
  app.add_option("--meter-timeout", flags.meter_timeout_s,
                 "kill a meter command running longer than this, s, 0.1 to 600 (default 5)");
  app.add_option("--node-interval", flags.node_interval_ms,
                 "period of node-power readings (RAPL, meter), ms, 100 to 60000 (default 1000)");
  app.add_flag("--no-powercap", flags.no_powercap,
               "do not read CPU and DRAM energy from Linux powercap (RAPL)");
}

measure::NodeOptions node_options(const NodeFlags& flags) {
  measure::NodeOptions options;
  options.powercap = !flags.no_powercap;
  if (flags.node_interval_ms)
    options.period = parse_duration("--node-interval", *flags.node_interval_ms, DurationUnit::kMilliseconds,
                                    kMinNodeIntervalMs, kMaxNodeIntervalMs);
  if (flags.meter_timeout_s)
    options.meter_timeout = parse_duration("--meter-timeout", *flags.meter_timeout_s, DurationUnit::kSeconds,
                                           kMinMeterTimeoutS, kMaxMeterTimeoutS);
  if (flags.meter_cmd) {
    options.meter_argv = hw::split_meter_command(*flags.meter_cmd);
    if (!hw::program_exists(options.meter_argv.front()))
      throw usage_error(fmt::format(
          "--meter-cmd: cannot find the program '{}': give a path to an executable or a name on PATH",
          options.meter_argv.front()));
  } else if (flags.meter_timeout_s) {
    throw usage_error("--meter-timeout needs --meter-cmd: give the meter command too, or drop it");
  }
  return options;
}

}  // namespace wattwise::cli
