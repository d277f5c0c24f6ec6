#pragma once

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fault_world.hpp"

// The invariants every fault-injection trial checks afterwards, as reusable checks. Each returns the
// violations it found (empty: the invariant holds), in words that say what is wrong, so a trial can
// report all of them at once together with its seed.
namespace wattwise::faults {

using Violations = std::vector<std::string>;

// Every GPU not in `lost` is back at `captured` (power limit, SM and memory clock locks). Polls up to
// `timeout`: after a SIGKILL the watchdog restores in the background.
Violations gpus_at_captured(const FaultWorld& world, const fake_nvml::FakeState& captured,
                            const std::set<std::string>& lost = {},
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

// No process of the job (every pid in the job's pid file) is still alive. Polls up to `timeout`, then
// kills the survivors (so they cannot disturb later trials) and reports them.
Violations no_orphans(const FaultWorld& world, std::chrono::milliseconds timeout = std::chrono::seconds(3));

struct StoreExpectations {
  bool traces = true;  // --trace-dir was given: every stored run has a trace per GPU in the DB
  unsigned gpu_count = 2;
  int may_lose = 0;  // finished jobs that may be missing from the DB (the one in flight at a SIGKILL)
};
// The database (if it exists): every plan index at most once; every stored run with its trace (complete
// lines, a header's worth of columns) per GPU; every job that ran to its end (the job's `done` file) stored,
// but for `may_lose`; no job cut by a signal it handled (the `cut` file) stored as a success.
Violations runs_stored_once(const FaultWorld& world, const std::filesystem::path& db,
                            const StoreExpectations& expect);

// After a --resume: every plan index 0..count-1 stored exactly once, as a success (failed runs re-run).
Violations plan_complete(const std::filesystem::path& db, std::size_t count);

// The exit code is one of `documented` (docs/sweep.md, docs/measure.md: 0, 1, 2, 3, 4, 128+N; never 70 or a
// crash), and stderr says what happened in one clear line: no "terminate called", no "internal error",
// and for a non-zero exit at least one line starting "wattwise: ", unless the code is in `job_codes`
// (measure passes the job's own exit code on; its summary says how the job ended).
Violations clear_outcome(const Finished& f, const std::set<int>& documented,
                         const std::set<int>& job_codes = {});

// No settings journal left in the state directory (a complete restore removes it), unless wattwise said so:
// a non-zero exit and stderr naming `wattwise restore` (a GPU that could not be restored keeps it).
Violations no_journal_left(const FaultWorld& world, const Finished& f);

// Joins violations into one message for a test failure, with the seed to replay.
std::string describe(const std::string& trial, std::uint64_t seed, const Violations& violations,
                     const Finished& f);

// Counts kept over all trials of a test binary, printed at its end for docs/safety.md.
struct Tally {
  int trials = 0;
  int survived = 0;
  int runs_lost = 0;
  int gpus_left_changed = 0;
  int orphans = 0;
};
Tally& tally();
void record(const Violations& violations);

}  // namespace wattwise::faults
