// `wattwise restore`: applies every stale settings journal (wattwise was killed with its watchdog, or the
// machine lost power during a sweep), reporting per GPU.
#include <cstdio>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/gpu_system.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"

namespace wattwise::cli {

namespace {

int run_restore() {
  const auto dir = safety::state_dir();
  const auto journals = safety::stale_journals(dir);
  if (journals.empty()) {
    std::printf("nothing to restore (no stale settings journal in %s)\n", dir.c_str());
    return 0;
  }
  auto system = open_real_gpus();
  bool all_ok = true;
  for (const auto& journal : journals) {
    std::printf("journal %s:\n", journal.c_str());
    const auto report = safety::restore_from_journal_file(*system, journal);
    std::printf("%s", report.summary().c_str());
    all_ok = all_ok && report.all_ok();
  }
  if (!all_ok) {
    std::fprintf(stderr,
                 "wattwise: some settings could not be restored; the journal is kept: fix the failures "
                 "above and run `wattwise restore` again\n");
    return 3;
  }
  std::printf("all GPU settings restored\n");
  return 0;
}

}  // namespace

CommandRun add_restore_command(CLI::App&) {
  return [] { return run_restore(); };
}

}  // namespace wattwise::cli
