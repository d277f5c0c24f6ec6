#pragma once

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

struct sqlite3;

namespace wattwise::store {

// The schema is documented in docs/results-schema.md; bump kResultsSchemaVersion with any change.
inline constexpr int kResultsSchemaVersion = 1;

struct StoreMeta {
  std::string command;             // the job's command line, for people
  std::string measurement_method;  // e.g. "counter+samples"
  std::string host;                // empty: this host's name
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

struct PhaseResult {
  std::optional<unsigned> gpu_index;  // absent: all GPUs together
  std::string name;
  unsigned count = 0;  // how many times the phase ran
  double time_s = 0;
  std::optional<double> energy_j;
  std::size_t samples = 0;  // readings the energy was cut from
  std::string method;
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
};

// A sweep's SQLite database. Each finished run is committed in its own transaction at once, so a crash
// loses at most the run in flight.
class ResultsStore {
 public:
  // A new database; usage_error if the file exists (use resume, or another --db).
  static ResultsStore create(const std::filesystem::path& path, const StoreMeta& meta,
                             const nlohmann::json& plan, const std::vector<StoredGpu>& gpus);
  // An existing database of the same plan; usage_error naming the difference if the plan is not the same.
  static ResultsStore open_for_resume(const std::filesystem::path& path, const nlohmann::json& plan);
  // Read-only access for analysis and export.
  static ResultsStore open_read_only(const std::filesystem::path& path);

  ResultsStore(ResultsStore&& other) noexcept;
  ResultsStore& operator=(ResultsStore&& other) noexcept;
  ~ResultsStore();

  void add_run(const RunRecord& run);
  void add_trace_csv(std::size_t plan_index, unsigned gpu_index, const std::string& csv);

  // Plan indices of runs stored (finished, successfully or not): resume skips them.
  std::set<std::size_t> completed_plan_indices() const;
  std::vector<RunRecord> runs() const;
  nlohmann::json plan() const;
  std::vector<StoredGpu> gpus() const;
  std::string meta(const std::string& key) const;  // "" when absent

  // The runs in the analysis CSV contract: one column per knob (named like the knob, with its unit), then
  // time_s, energy_j, repeat, work, label. Warm-ups and failed runs are left out.
  void export_runs_csv(std::ostream& out) const;

 private:
  ResultsStore(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

}  // namespace wattwise::store
