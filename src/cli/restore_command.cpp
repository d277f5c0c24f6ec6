// `wattwise restore`: applies every stale settings journal (wattwise was killed with its watchdog, or the
// machine lost power during a sweep), reporting per GPU. Its hidden form `restore --watchdog FD --journal
// PATH` is the watchdog process that a sweep starts (safety/watchdog.hpp).
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/gpu_system.hpp"
#include "core/error.hpp"
#include "safety/restore.hpp"
#include "safety/state_dir.hpp"
#include "safety/watchdog.hpp"

namespace wattwise::cli {

namespace {

struct RestoreFlags {
  int watchdog_fd = -1;
  std::string journal;
};

int run_restore() {
  const auto dir = safety::state_dir();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::printf("nothing to restore (no state directory %s)\n", dir.c_str());
    return 0;
  }
  // Journals from a directory that others can write may be planted: refuse before reading any.
  safety::check_state_dir(dir);
  for (const auto& temporary : safety::remove_stale_journal_temporaries(dir))
    std::printf("removed %s, left by a wattwise killed while it rewrote its journal\n", temporary.c_str());
  const auto journals = safety::stale_journals(dir);
  if (journals.empty()) {
    std::printf("nothing to restore (no stale settings journal in %s)\n", dir.c_str());
    return 0;
  }
  auto system = open_real_gpus();
  std::vector<std::string> not_restored;  // GPUs (by UUID) that are still changed
  std::vector<std::string> refused;       // journals not applied at all
  for (const auto& journal : journals) {
    std::printf("journal %s:\n", journal.c_str());
    try {
      const auto report = safety::restore_from_journal_file(*system, journal);
      std::printf("%s", report.summary().c_str());
      for (const auto& uuid : report.failed_uuids()) not_restored.push_back(uuid);
    } catch (const Error& e) {
      // One bad journal must not keep the others from being applied: say why, keep it, go on.
      std::printf("NOT APPLIED: %s\n", e.what());
      refused.push_back(journal.string());
    }
  }
  if (!not_restored.empty()) {
    std::fprintf(stderr,
                 "wattwise: GPU %s not restored (lost, or failed: see above); the journal is kept for them "
                 "only: fix them and run `wattwise restore` again\n",
                 fmt::format("{}", fmt::join(not_restored, ", ")).c_str());
  }
  if (!refused.empty()) {
    std::fprintf(stderr,
                 "wattwise: settings journal %s not applied (see above) and kept: restore those GPUs by hand "
                 "(nvidia-smi -pl / -rgc / -rmc), then delete the file\n",
                 fmt::format("{}", fmt::join(refused, ", ")).c_str());
  }
  // A GPU left changed is the machine's problem (3); a refused journal alone is a data problem (4).
  if (!not_restored.empty()) return static_cast<int>(ErrorKind::kEnvironment);
  if (!refused.empty()) return static_cast<int>(ErrorKind::kData);
  std::printf("all GPU settings restored\n");
  return 0;
}

}  // namespace

CommandRun add_restore_command(CLI::App& app) {
  auto flags = std::make_shared<RestoreFlags>();
  // The watchdog's form, started by a sweep: hidden from --help (an empty group).
  app.add_option("--watchdog", flags->watchdog_fd, "internal: run as the settings watchdog on this socket")
      ->group("");
  app.add_option("--journal", flags->journal, "internal: the journal the watchdog restores from")->group("");
  return [flags] {
    if (flags->watchdog_fd >= 0 || !flags->journal.empty()) {
      if (flags->watchdog_fd < 0 || flags->journal.empty())
        throw usage_error("--watchdog and --journal are internal and go together");
      return safety::run_watchdog(
          flags->watchdog_fd, [] { return open_real_gpus(); }, flags->journal);
    }
    return run_restore();
  };
}

}  // namespace wattwise::cli
