#pragma once

#include <cstdint>
#include <functional>
#include <string>

struct sqlite3;

namespace wattwise::store {

struct PhaseResult;

// The one reader of run_phases, for both readers of runs (ResultsStore::runs, read_analysis_runs): every
// row in run and insertion order, typed, handed to `visit` with its runs.id (a row of a run the caller does
// not read is the caller's to skip), with its stored error bar (absent in a database older than version 7).
void read_phase_rows(sqlite3* db, const std::string& path,
                     const std::function<void(std::int64_t run_id, PhaseResult&& phase)>& visit);

}  // namespace wattwise::store
