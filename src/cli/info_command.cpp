#include <iostream>

#include "cli/commands.hpp"
#include "cli/gpu_system.hpp"
#include "report/info_report.hpp"
#include "sim/simulation.hpp"

namespace wattwise::cli {

CommandRun add_info_command(CLI::App& app) {
  struct Flags {
    bool json = false;
    std::string simulate;
  };
  auto flags = std::make_shared<Flags>();
  app.add_flag("--json", flags->json, "print JSON for programs instead of tables");
  app.add_option("--simulate", flags->simulate, "show a simulated GPU instead, e.g. v100 or v100:resnet50");
  return [flags]() {
    std::unique_ptr<hw::GpuSystem> system;
    std::optional<sim::Simulation> simulation;
    if (!flags->simulate.empty()) {
      // "v100" alone shows the board; the model half only matters to jobs.
      const auto spec =
          flags->simulate.find(':') == std::string::npos ? flags->simulate + ":resnet50" : flags->simulate;
      simulation = sim::make_simulation(spec);
    } else {
      system = open_real_gpus();
    }
    hw::GpuSystem& gpus = simulation ? static_cast<hw::GpuSystem&>(*simulation->system) : *system;
    if (flags->json) {
      std::cout << report::info_json(gpus).dump(2) << "\n";
    } else {
      std::cout << report::info_text(gpus);
    }
    return 0;
  };
}

}  // namespace wattwise::cli
