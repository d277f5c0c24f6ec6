#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "cli/command_gpus.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "daemon/client.hpp"
#include "hw/gpu_snapshot.hpp"
#include "report/info_live.hpp"
#include "report/info_report.hpp"
#include "safety/gpu_lock.hpp"
#include "safety/state_dir.hpp"

namespace wattwise::cli {

namespace {

// `info --probe`: sets each GPU's power limit to the value it has, which changes nothing but makes the
// driver say whether it allows the call (root is not always enough). Under the GPU's lock, as a sweep's own
// probe, so no other wattwise is changing that limit meanwhile.
std::vector<std::optional<report::SetProbe>> probe_set_permission(hw::ControllableGpuSystem& system) {
  std::vector<std::optional<report::SetProbe>> probes;
  for (std::size_t i = 0; i < system.count(); ++i) {
    hw::Gpu& gpu = system.gpu(i);
    const auto caps = gpu.capabilities();
    const auto limits = gpu.power_limits();
    if (!caps.power_limit_set || !limits) {
      probes.emplace_back();
      continue;
    }
    report::SetProbe probe;
    try {
      const auto state = safety::state_dir();
      safety::ensure_state_dir(state);
      const auto lock = safety::GpuLock::acquire(state, gpu.identity().uuid);
      try {
        gpu.set_power_limit_w(limits->current_w);
        probe.allowed = true;
      } catch (const Error& e) {
        probe.allowed = false;
        probe.note = e.what();
      }
    } catch (const Error& e) {
      probe.note = fmt::format("could not ask the driver: {}", e.what());
    }
    probes.push_back(probe);
  }
  return probes;
}

}  // namespace

CommandRun add_info_command(CLI::App& app) {
  struct Flags {
    bool json = false;
    std::string format = "table";
    bool probe = false;
    std::string simulate;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("--format", flags->format,
                 "table (for people), json or csv (for programs: docs/info.md); all show live readings")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  app.add_flag("--json", flags->json, "the same as --format json");
  app.add_flag("--probe", flags->probe,
               "ask the driver whether settings may change, by setting each power limit to the value it "
               "has (changes nothing)");
  app.add_option("--simulate", flags->simulate, "show a simulated GPU instead, e.g. v100 or v100:resnet50");
  return [flags]() {
    // "v100" alone shows the board; the model half only matters to jobs.
    const bool board_alone = !flags->simulate.empty() && flags->simulate.find(':') == std::string::npos;
    CommandGpus command_gpus(board_alone ? flags->simulate + ":resnet50" : flags->simulate, {}, false);
    hw::GpuSystem& gpus = command_gpus.system();
    const auto probes = flags->probe ? probe_set_permission(*command_gpus.controllable())
                                     : std::vector<std::optional<report::SetProbe>>{};
    const hw::SystemSnapshot snapshot = hw::read_snapshot(gpus);  // every reading, before any formatting
    if (flags->json || flags->format == "json") {
      std::cout << json_text(report::info_json(snapshot, probes), 2) << "\n";
    } else if (flags->format == "csv") {
      std::cout << report::info_csv(snapshot);
    } else {
      std::cout << report::info_text(snapshot, probes);
      // Who may change settings here besides root: the settings daemon and what its policy grants this user.
      if (!command_gpus.simulated())
        std::cout << "settings daemon: " << daemon::daemon_status_line(daemon::default_socket_path(), ::geteuid() == 0)
                  << "\n";
    }
    // Every other GPU was listed; the unreadable ones make the exit code say the machine needs looking at.
    int exit_code = 0;
    for (const auto& gpu : snapshot.gpus) {
      if (gpu.unreadable) {
        std::fprintf(stderr, "wattwise: %s\n", gpu.unreadable->c_str());
        exit_code = static_cast<int>(ErrorKind::kEnvironment);
      }
    }
    return exit_code;
  };
}

}  // namespace wattwise::cli
