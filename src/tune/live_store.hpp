#pragma once

// `tune --db FILE`: the tuned job as one run of a results database (what `measure` measured, with its
// phases) and the decision trace beside it (store/tune_table.hpp; docs/results-schema.md, version 4), so
// that `wattwise report FILE` shows both.

#include <filesystem>
#include <string>

#include "measure/measurement.hpp"
#include "store/results_store.hpp"
#include "store/tune_table.hpp"
#include "tune/live_tuning.hpp"

namespace wattwise::tune {

// The trace as stored.
store::TuneTrace tune_trace_of(const LiveTuningResult& result);

class TuneStore {
 public:
  // Before the job runs: the file must be new and its directory writable (usage_error / environment_error
  // saying what to do), so a bad --db never costs a job.
  static TuneStore check_new(const std::filesystem::path& path);
  // After the job: creates the database with the run, the trace and the job's GPUs (`gpus`: their
  // identities and power-limit constraints, experiment::stored_gpus_of, read before the job), and meta
  // `settings_changed_by` ("root", "daemon", or "none" in a dry run).
  void write(const measure::Measurement& m, const LiveTuningResult& result, std::vector<store::StoredGpu> gpus,
             const std::string& settings_changed_by) const;

 private:
  TuneStore(std::filesystem::path path, std::string started_at)
      : path_(std::move(path)), started_at_(std::move(started_at)) {}
  std::filesystem::path path_;
  std::string started_at_;
};

}  // namespace wattwise::tune
