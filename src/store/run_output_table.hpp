#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct sqlite3;

namespace wattwise::store {

// The end of what a run's job wrote on one stream (schema version 8, table run_output; docs/results-schema.md):
// a sweep keeps the last workload::kOutputTailBytes of each run's stdout and stderr, so that a failed run
// says more than its exit status (`wattwise runs DB --failed`). A database made before version 8 has none.
struct RunOutput {
  std::string stream;       // "stdout" or "stderr"
  std::string tail;         // the last bytes written, as written (not necessarily UTF-8)
  std::uint64_t bytes = 0;  // everything the job wrote on the stream
  bool truncated = false;   // bytes > tail's size: the beginning was not kept
};

// Creates run_output if it is not there (new databases, and the upgrade of older files).
void create_run_output_table(sqlite3* db, const std::string& path);
void insert_run_output(sqlite3* db, const std::string& path, std::int64_t run_id,
                       const std::vector<RunOutput>& output);
// The output kept of the run stored at `plan_index` (stdout first); none for a file older than version 8, a
// simulated run, or a run measured elsewhere.
std::vector<RunOutput> read_run_output(sqlite3* db, const std::string& path, std::int64_t plan_index);

}  // namespace wattwise::store
