#pragma once

#include <string>
#include <vector>

#include "measure/measurement.hpp"
#include "plan/plan.hpp"
#include "store/results_store.hpp"

namespace wattwise::store {

// A run's record before its results: which planned run, when, and how the job exited (one place for the
// one-node runner, the multi-node sweep and `tune`).
RunRecord planned_run_record(const plan::PlannedRun& run, const std::string& started_at,
                             const std::string& ended_at, int exit_status);

// The database row of one measured run; `read_back` holds what each GPU enforced once its settings were
// applied (experiment::read_back_settings; empty when nothing was set).
RunRecord record_of(const plan::PlannedRun& run, const measure::Measurement& m,
                    const std::vector<GpuRunEnergy>& read_back, const std::string& started_at,
                    const std::string& ended_at);

}  // namespace wattwise::store
