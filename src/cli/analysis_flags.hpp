#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "analysis/analysis.hpp"

namespace wattwise::cli {

// The flags that steer an analysis, shared by `analyze` and `report` so both read them the same way.
struct AnalysisFlags {
  std::vector<std::string> metrics;
  std::string max_slowdown;
  std::string reference;
  std::string phase;         // empty: the job's work phase where the runs carry one
  std::string energy_scope;  // empty: the node where the GPU count varies, else the job's GPUs
};

void add_analysis_flags(CLI::App& app, AnalysisFlags& flags);

// Parsed; bad values are usage errors. Leaves default_setting alone (that comes from the data).
void apply_analysis_flags(const AnalysisFlags& flags, analysis::AnalysisOptions& options);

// --max-slowdown as given ("10%", "none"): every recommendation and the headline within it (`sweep` reads
// the same flag for the analysis it prints after its runs).
void apply_max_slowdown(const std::string& max_slowdown, analysis::AnalysisOptions& options);

}  // namespace wattwise::cli
