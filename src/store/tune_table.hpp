#pragma once

// The decision trace of `wattwise tune --db` (docs/results-schema.md, tables tune, tune_decisions,
// tune_changes and tune_settings; schema version 4, and tune_decisions.estimate_of since version 9). Plain
// rows: the store knows nothing of the tuner.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace wattwise::store {

struct TuneDecisionRow {
  std::string kind;  // probe, settle, retune
  double value = 0;  // the setting to hold from then on
  std::uint64_t at_iteration = 0;
  double estimate = 0;  // the metric of the setting estimate_of, normalised to the start's
  double interval_low = 0;
  double interval_high = 0;
  std::uint64_t iterations = 0;  // the estimate rests on
  std::string reason;
  // The setting the estimate is of (schema version 9); absent (NULL) in a trace stored before it, never 0.
  std::optional<double> estimate_of;
};

struct TuneChangeRow {
  double value = 0;
  double at_s = 0;  // since the job's start
  std::uint64_t at_iteration = 0;
};

struct TuneSettingRow {
  double value = 0;
  std::uint64_t iterations = 0;
  double time_s_mean = 0;
  double time_s_std = 0;
  std::optional<double> energy_j_mean;
  std::optional<double> energy_j_std;
};

struct TuneTrace {
  std::string knob;  // power-limit, sm-clock
  std::string unit;  // W, MHz
  std::string metric;
  double start_value = 0;
  std::optional<double> settled_value;
  std::uint64_t profiling_iterations = 0;
  std::uint64_t iterations = 0;
  bool dry_run = false;
  std::vector<TuneDecisionRow> decisions;
  std::vector<TuneChangeRow> changes;
  std::vector<TuneSettingRow> settings;
};

// Creates the tables if they are not there, and tune_decisions.estimate_of where it is missing (new
// databases, and the upgrade of an older file, which only adds).
void create_tune_tables(sqlite3* db, const std::string& path);
// Writes the trace (the caller holds the transaction).
void insert_tune_trace(sqlite3* db, const std::string& path, const TuneTrace& trace);
// The trace; absent when the database holds none (a sweep, or a file older than version 4).
std::optional<TuneTrace> read_tune_trace(sqlite3* db, const std::string& path);

}  // namespace wattwise::store
