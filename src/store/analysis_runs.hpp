#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_record.hpp"
#include "store/results_store.hpp"

namespace wattwise::store {

// A sweep database's runs as the analysis reads them, without a CSV round trip. The store knows the
// analysis's plain record type (analysis sits below store and knows nothing of it), so `analyze`,
// `report` and `sweep` all read through this one function and cannot disagree.
struct AnalysisRuns {
  std::vector<analysis::RunRecord> runs;             // warm-ups and failed runs left out, in plan order
  std::optional<analysis::Setting> default_setting;  // the plan's reference, when it names one
};

// Each run carries its settings (numeric knob values; a non-numeric one is a data_error naming it, as
// the runs CSV refuses it), time, energy, work and label, and its phases: the all-GPU row of each phase
// where the store has one, else the GPUs' rows combined (time: the longest, energy: the sum, absent if any
// GPU lacks it). Text read from the database is repaired to valid UTF-8.
AnalysisRuns read_analysis_runs(const ResultsStore& store);

// The runs of a sweep database (as read_analysis_runs) or of a runs CSV (docs/analysis-csv.md, no phases, no
// default setting), told apart by is_database_input.
AnalysisRuns read_runs_file(const std::string& path);

// One run's phases combined as above, in the order they were first stored.
std::vector<analysis::PhaseRecord> combine_phases(const std::vector<PhaseResult>& results);

}  // namespace wattwise::store
