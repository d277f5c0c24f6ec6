#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "store/cluster_node_table.hpp"
#include "store/node_energy_table.hpp"
#include "store/run_output_table.hpp"
#include "store/tune_table.hpp"

struct sqlite3;

namespace wattwise::store {

// The schema is documented in docs/results-schema.md; bump kResultsSchemaVersion with any change.
// Version 2: WAL journal, earlier_attempts, meta command_json/sweep_json/mixed_results. Version 3: tables
// run_gpu_usage (which GPUs the job's processes were seen on) and run_node_energy (node power beside the
// GPUs, store/node_energy_table.hpp). Older files are read as they are and upgraded in place when resumed
// (each version only adds). Version 5: table run_cluster_nodes (a multi-node run's nodes, `sweep --slurm`).
// Version 7: energy_uncertainty_j columns. Version 8: table run_output (the end of each run's stdout and
// stderr, store/run_output_table.hpp). Version 9: column tune_decisions.estimate_of (store/tune_table.hpp).
inline constexpr int kResultsSchemaVersion = 9;
inline constexpr int kOldestReadableSchemaVersion = 1;
// How long a statement waits for another program's lock on the database before it fails (SQLite's busy
// timeout); a run's commit is then tried kCommitAttempts times in all before the sweep gives up.
inline constexpr std::chrono::milliseconds kDefaultBusyTimeout{30000};
inline constexpr int kCommitAttempts = 3;

struct StoreMeta {
  std::string command;                         // the job's command line, for people
  std::string measurement_method;              // e.g. "counter+samples"
  std::string host;                            // empty: this host's name
  std::vector<std::string> command_argv = {};  // the command, exactly: resume compares it; empty: unknown
  // The sweep's other options (GPUs, trace directory, time-out, ...), so that `sweep --resume --db X` alone
  // can continue with them. Null: not stored.
  nlohmann::json sweep_options = {};
};

struct StoredGpu {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  std::optional<double> min_limit_w;
  std::optional<double> max_limit_w;
  std::optional<double> default_limit_w;
};

struct GpuRunEnergy {
  unsigned gpu_index = 0;
  std::optional<double> energy_j;
  std::optional<double> avg_power_w;
  std::optional<double> peak_power_w;
  std::string method;
  std::optional<double> enforced_power_limit_w;  // read back after applying the run's settings
  std::optional<unsigned> sm_clock_mhz;          // read back
  std::optional<unsigned> mem_clock_mhz;         // read back
};

// Whether the job was seen on one GPU of the node during a run (measure::GpuUsage as stored).
struct GpuRunUsage {
  unsigned gpu_index = 0;
  std::string uuid;
  bool expected = false;         // one of the job's GPUs
  bool measured = false;         // sampled in this run
  std::optional<bool> job_seen;  // absent: the driver could not tell
  std::vector<int> pids;         // the job's pids seen on it
};

struct PhaseResult {
  std::optional<unsigned> gpu_index;  // absent: all GPUs together
  std::string name;
  unsigned count = 0;  // how many times the phase ran
  double time_s = 0;
  std::optional<double> energy_j;
  std::size_t samples = 0;  // readings the energy was cut from
  std::string method;
  std::optional<double> energy_uncertainty_j = std::nullopt;  // energy_j's error bar (+-); absent: unknown (schema < 7)
};

// One GPU's trace of a run, in the trace CSV format.
struct TraceCsv {
  unsigned gpu_index = 0;
  std::string csv;
};

struct RunRecord {
  std::size_t plan_index = 0;
  std::vector<plan::KnobSetting> settings;
  unsigned repeat = 0;
  bool warmup = false;
  std::string started_at;  // UTC ISO 8601
  std::string ended_at;
  std::optional<int> exit_status;  // absent: the job did not run or was lost
  std::optional<double> time_s;
  std::optional<double> energy_j;  // total over all GPUs
  std::string method;
  std::string error;           // empty when the run succeeded
  std::optional<double> work;  // samples processed, when the job reports it
  std::string label;
  std::vector<GpuRunEnergy> gpus;
  std::vector<PhaseResult> phases;
  std::vector<NodeRunEnergy> node;          // node power sources (CPU package, DRAM, meter); empty: none read
  std::vector<PhaseNodeEnergy> phase_node;  // the node over each phase (every GPU, the node sources)
  std::vector<GpuRunUsage> gpu_usage;       // every GPU of the node; empty when not detected
  std::vector<ClusterNodeEnergy> cluster_nodes;  // a multi-node run's nodes (`sweep --slurm`); else empty
  std::vector<TraceCsv> traces;  // stored in the run's own transaction: a run is never stored without them
  // The end of the job's stdout and stderr (schema 8), stored with the run; runs() does not read it back
  // (ResultsStore::run_output does, one run at a time: 128 KiB a run).
  std::vector<RunOutput> output;
  std::optional<double> energy_uncertainty_j = std::nullopt;  // energy_j's error bar (+-); absent: unknown (schema < 7)
};

// A failed run that a resumed sweep ran again: kept for the record, out of `runs` (so that each plan index
// is analysed once).
struct EarlierAttempt {
  std::size_t plan_index = 0;
  std::string started_at;
  std::string ended_at;
  std::optional<int> exit_status;
  std::string error;
  std::string replaced_at;  // when the new attempt was stored
};

// A sweep's SQLite database, in rooms: the file's lifecycle (store/database.hpp: open, lock, check), the
// schema (store/schema.hpp: create, upgrade, indexes), writing runs (run_writer.cpp) and reading them
// (run_reader.cpp: each table read once, whatever the number of runs). Each finished run is committed in its own transaction at once (with its
// phases and traces), so a crash or a full disk loses at most the run in flight. WAL journal and a busy
// timeout: readers never stop the sweep. One writer at a time: create and open_for_resume take an
// exclusive lock on `<db>.lock` (kept beside the database) and refuse a second writer at once.
struct AnalysisRuns;  // analysis_runs.hpp

// For the commands that read a sweep database or a CSV (analyze, report, --replay): true when `path` starts
// with SQLite's header, false for anything else (a CSV), except a file named like a database (.db, .sqlite,
// .sqlite3) without the header: a data error saying so, never parsed as a CSV.
bool is_database_input(const std::filesystem::path& path);

class ResultsStore {
 public:
  // A new database; usage_error if the file exists (use resume, or another --db).
  static ResultsStore create(const std::filesystem::path& path, const StoreMeta& meta,
                             const nlohmann::json& plan, const std::vector<StoredGpu>& gpus);
  // An existing database of the same plan; usage_error naming the difference if the plan is not the same.
  // A version 1 database is upgraded to the current version.
  static ResultsStore open_for_resume(const std::filesystem::path& path, const nlohmann::json& plan);
  // Read-only access for analysis and export (any readable version).
  static ResultsStore open_read_only(const std::filesystem::path& path);

  // On resume: a usage error if `meta.command_argv` or the GPUs (by UUID, in order) differ from the stored
  // ones, unless `allow_different`; then the difference is recorded in meta `mixed_results`.
  void check_same_job(const StoreMeta& meta, const std::vector<StoredGpu>& gpus, bool allow_different);
  void set_busy_timeout(std::chrono::milliseconds timeout);
  // Meta `settings_changed_by`: which path changed the GPU settings of the runs ("root", "daemon", "none").
  // A resumed sweep that took another path adds it after a comma ("root,daemon"), in the order first used.
  void record_settings_changed_by(const std::string& path);
  // On resume: meta `sweep_json` becomes the options this resume runs with. Options given on the command line
  // win over the stored ones (an adaptive sweep's --metric and --max-slowdown steer the runs that follow), so
  // the next `--resume --db FILE` alone must continue with them, not with the ones the sweep started with.
  void record_sweep_options(const nlohmann::json& sweep_options);

  ResultsStore(ResultsStore&& other) noexcept;
  ResultsStore& operator=(ResultsStore&& other) noexcept;
  ~ResultsStore();

  // Stores the run with its GPUs, phases and traces in one transaction, retried kCommitAttempts times
  // while another program holds the database. A failed run of the same plan index stored before moves to
  // earlier_attempts in the same transaction.
  void add_run(const RunRecord& run);
  // `tune --db`: the decision trace, in one transaction (schema 4; store/tune_table.hpp).
  void add_tune_trace(const TuneTrace& trace);
  // The decision trace; absent for a sweep's database and for files older than version 4.
  std::optional<TuneTrace> tune_trace() const;
  void add_trace_csv(std::size_t plan_index, unsigned gpu_index, const std::string& csv);

  // Plan indices of runs stored (finished, successfully or not).
  std::set<std::size_t> completed_plan_indices() const;
  // Plan indices of runs stored without error: resume skips these and runs the failed ones again.
  std::set<std::size_t> succeeded_plan_indices() const;
  std::vector<EarlierAttempt> earlier_attempts() const;
  // Where the job of the run at `plan_index` was seen (schema 3; empty for older files and simulated runs).
  std::vector<GpuRunUsage> gpu_usage(std::size_t plan_index) const;
  int schema_version() const;
  // The end of the stdout and stderr of the run stored at `plan_index` (schema 8; empty for older files,
  // simulated runs and runs measured elsewhere).
  std::vector<RunOutput> run_output(std::size_t plan_index) const;
  // Every stored run with its settings, GPUs, phases and node figures (one query per table).
  std::vector<RunRecord> runs() const;
  nlohmann::json plan() const;
  std::vector<StoredGpu> gpus() const;
  std::string meta(const std::string& key) const;  // "" when absent

  // The runs in the analysis CSV contract: one column per knob (named like the knob, with its unit), then
  // time_s, energy_j, repeat, work, label. Warm-ups and failed runs are left out.
  void export_runs_csv(std::ostream& out) const;

 private:
  // Reads only what the analysis needs, in three queries: the hot path of an adaptive sweep, which
  // analyses after every run.
  friend AnalysisRuns read_analysis_runs(const ResultsStore& store);
  ResultsStore(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  // The writer's store: `open` opens the database; `lock_fd`, the writer lock, is closed if that fails.
  static ResultsStore writer(const std::filesystem::path& path, int lock_fd,
                             sqlite3* (*open)(const std::filesystem::path&, int), int flags);
  void add_run_once(const RunRecord& run);
  void close();
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int writer_lock_fd_ = -1;  // held by a writer, -1 for readers
};

}  // namespace wattwise::store
