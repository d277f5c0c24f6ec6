#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_selection.hpp"
#include "cli/gpu_system.hpp"
#include "cli/output_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_text.hpp"
#include "slurm/counter_snapshot.hpp"

namespace wattwise::cli {

namespace {

struct CounterFlags {
  std::string gpus = "all";
  std::string since;
  std::string json = "-";
};

double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A snapshot is a few hundred bytes per GPU: 1 MiB is far more than one ever is.
constexpr std::size_t kMaxSnapshotBytes = std::size_t{1} << 20;

slurm::CounterSnapshot read_since_file(const std::string& path) {
  std::error_code ignored;
  if (!std::filesystem::exists(path, ignored))
    throw usage_error(
        fmt::format("--since '{}' cannot be read: give the file `wattwise counter` wrote", path));
  // Through core/input_file: a FIFO would hang the read (a prolog waiting forever), /dev/zero fill memory.
  const std::string text = read_regular_file(path, kMaxSnapshotBytes, "the file `wattwise counter` wrote");
  return slurm::counter_snapshot_from_json(parse_json_limited(text, fmt::format("--since '{}'", path)), path);
}

int run_counter(const CounterFlags& flags) {
  // Everything that can be refused is checked before the GPUs are read.
  std::optional<slurm::CounterSnapshot> before;
  if (!flags.since.empty()) before = read_since_file(flags.since);
  OutputFile out(flags.json);
  auto system = open_real_gpus();
  const auto positions = select_gpus(*system, flags.gpus);
  const auto now = slurm::read_counters(*system, positions, unix_now_s());
  out.stream() << json_text(before ? slurm::energy_between(*before, now) : slurm::to_json(now), 1) << "\n";
  out.commit();
  return 0;
}

}  // namespace

CommandRun add_counter_command(CLI::App& app) {
  auto flags = std::make_shared<CounterFlags>();
  app.add_option("--gpus", flags->gpus, "GPUs to read: indices or UUIDs, comma separated, or all")
      ->capture_default_str();
  app.add_option(
      "--since", flags->since,
      "print each GPU's energy since this earlier `wattwise counter` output instead (SLURM epilog)");
  app.add_option("--json", flags->json, "write the JSON to this file ('-': stdout)")->capture_default_str();
  return [flags]() { return run_counter(*flags); };
}

}  // namespace wattwise::cli
